// The FHIRcast 3.0 event catalogue Hearth's hub accepts, and the checks of an event's context
// (fhircast.org, "Event catalog"): which keys each event requires, with which resource types.
import { badRequest, fail, type Resource } from '@hearth/core';

/** One context item: a key with a resource, or (reference-typed keys) a reference or several. */
export interface ContextItem {
  key: string;
  resource?: Resource;
  reference?: { reference?: string } | { reference?: string }[];
}

/** An event as published and as delivered (`event.context.versionId` is kept flat, as the spec writes it). */
export interface FhircastEvent {
  timestamp: string;
  id: string;
  event: {
    'hub.topic': string;
    'hub.event': string;
    context: ContextItem[];
    'context.versionId'?: string;
    'context.priorVersionId'?: string;
  };
}

interface KeyRule {
  key: string;
  /** Resource type of the key's resource (or of the reference). */
  type: string;
  min: 0 | 1;
  max: 1 | '*';
  /** reference-typed keys accept `reference` (or a resource carrying at least its id). */
  reference?: boolean;
}

interface EventRule {
  name: string;
  keys: KeyRule[];
  /** The context this event opens or closes, for the hub's current context. */
  anchor?: { type: string; key: string; action: 'open' | 'close' };
}

const patient1: KeyRule = { key: 'patient', type: 'Patient', min: 1, max: 1 };
const patient0: KeyRule = { key: 'patient', type: 'Patient', min: 0, max: 1 };
const encounter0: KeyRule = { key: 'encounter', type: 'Encounter', min: 0, max: 1 };
const studies: KeyRule = { key: 'study', type: 'ImagingStudy', min: 0, max: '*' };

const RULES: EventRule[] = [
  { name: 'Patient-open', keys: [patient1, encounter0], anchor: { type: 'Patient', key: 'patient', action: 'open' } },
  { name: 'Patient-close', keys: [patient1, encounter0], anchor: { type: 'Patient', key: 'patient', action: 'close' } },
  {
    name: 'Encounter-open',
    keys: [{ key: 'encounter', type: 'Encounter', min: 1, max: 1 }, patient1],
    anchor: { type: 'Encounter', key: 'encounter', action: 'open' },
  },
  {
    name: 'Encounter-close',
    keys: [{ key: 'encounter', type: 'Encounter', min: 1, max: 1 }, patient1],
    anchor: { type: 'Encounter', key: 'encounter', action: 'close' },
  },
  {
    name: 'ImagingStudy-open',
    keys: [{ key: 'study', type: 'ImagingStudy', min: 1, max: 1 }, encounter0, patient0],
    anchor: { type: 'ImagingStudy', key: 'study', action: 'open' },
  },
  {
    name: 'ImagingStudy-close',
    keys: [{ key: 'study', type: 'ImagingStudy', min: 1, max: 1 }, encounter0, patient0],
    anchor: { type: 'ImagingStudy', key: 'study', action: 'close' },
  },
  {
    name: 'DiagnosticReport-open',
    keys: [{ key: 'report', type: 'DiagnosticReport', min: 1, max: 1 }, encounter0, studies, patient1],
    anchor: { type: 'DiagnosticReport', key: 'report', action: 'open' },
  },
  {
    name: 'DiagnosticReport-close',
    keys: [{ key: 'report', type: 'DiagnosticReport', min: 1, max: 1 }, encounter0, studies, patient1],
    anchor: { type: 'DiagnosticReport', key: 'report', action: 'close' },
  },
  {
    name: 'DiagnosticReport-update',
    keys: [
      { key: 'report', type: 'DiagnosticReport', min: 1, max: 1, reference: true },
      patient0,
      studies,
      { key: 'updates', type: 'Bundle', min: 1, max: 1 },
    ],
  },
  {
    name: 'DiagnosticReport-select',
    keys: [
      { key: 'report', type: 'DiagnosticReport', min: 1, max: 1, reference: true },
      patient0,
      { key: 'select', type: '*', min: 1, max: '*', reference: true },
    ],
  },
];

/** The event a hub sends when a subscriber could not follow an event (not publishable by clients). */
export const SYNC_ERROR = 'SyncError';

/** Every event name the hub distributes, as the spec writes them. */
export const SUPPORTED_EVENTS: string[] = [...RULES.map((r) => r.name), SYNC_ERROR];

const BY_LOWER = new Map(RULES.map((r) => [r.name.toLowerCase(), r]));

/** The spec's spelling of an event name (names are case-insensitive), or undefined when not supported. */
export function canonicalEventName(name: string): string | undefined {
  if (name.toLowerCase() === SYNC_ERROR.toLowerCase()) {
    return SYNC_ERROR;
  }
  return BY_LOWER.get(name.toLowerCase())?.name;
}

export function anchorOf(eventName: string): EventRule['anchor'] {
  return BY_LOWER.get(eventName.toLowerCase())?.anchor;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The references of a reference-typed item (`reference` one or many, or a resource with an id). */
export function itemReferences(item: ContextItem): string[] {
  if (item.resource?.resourceType && item.resource.id) {
    return [`${item.resource.resourceType}/${item.resource.id}`];
  }
  const refs = Array.isArray(item.reference) ? item.reference : item.reference ? [item.reference] : [];
  return refs.map((r) => r.reference).filter((r): r is string => typeof r === 'string');
}

function checkItem(rule: KeyRule, item: ContextItem, where: string): void {
  if (rule.reference) {
    const refs = itemReferences(item);
    if (refs.length === 0) {
      fail(badRequest(`Context "${rule.key}" needs a reference or a resource with an id`, where));
    }
    for (const ref of refs) {
      const [type, id] = ref.split('/');
      if (!id || (rule.type !== '*' && type !== rule.type)) {
        fail(badRequest(`Context "${rule.key}" must refer to a ${rule.type}, got "${ref}"`, where));
      }
    }
    return;
  }
  if (!isObject(item.resource)) {
    fail(badRequest(`Context "${rule.key}" needs a resource (${rule.type})`, `${where}.resource`));
  }
  if (item.resource.resourceType !== rule.type) {
    fail(
      badRequest(
        `Context "${rule.key}" must be a ${rule.type}, got ${String(item.resource.resourceType)}`,
        `${where}.resource.resourceType`,
      ),
    );
  }
  if (rule.type !== 'Bundle' && (typeof item.resource.id !== 'string' || item.resource.id === '')) {
    fail(badRequest(`Context "${rule.key}" (${rule.type}) needs an id`, `${where}.resource.id`));
  }
}

/**
 * Checks a published event's shape and its context against the catalogue, and returns it with
 * the event name in the spec's spelling. Anything missing or mistyped is a 400 saying where.
 */
export function parseEvent(body: unknown, topicInPath?: string): FhircastEvent {
  if (!isObject(body)) {
    fail(badRequest('Send the event as a JSON object: { timestamp, id, event }'));
  }
  if (typeof body.id !== 'string' || body.id === '' || body.id.length > 200) {
    fail(badRequest('The event needs an id (a string of at most 200 characters)', 'id'));
  }
  if (typeof body.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp))) {
    fail(badRequest('The event needs a timestamp (an instant)', 'timestamp'));
  }
  const event = body.event;
  if (!isObject(event)) {
    fail(badRequest('The event needs an "event" object with hub.topic, hub.event and context', 'event'));
  }
  const topic = event['hub.topic'];
  if (typeof topic !== 'string' || topic === '') {
    fail(badRequest('The event needs hub.topic', 'event.hub.topic'));
  }
  if (topicInPath !== undefined && topicInPath !== topic) {
    fail(badRequest(`hub.topic "${topic}" differs from the topic of the URL "${topicInPath}"`, 'event.hub.topic'));
  }
  const given = event['hub.event'];
  if (typeof given !== 'string') {
    fail(badRequest('The event needs hub.event', 'event.hub.event'));
  }
  const name = canonicalEventName(given);
  if (!name || name === SYNC_ERROR) {
    fail(
      badRequest(
        `Unsupported event "${given}": this hub accepts ${RULES.map((r) => r.name).join(', ')}`,
        'event.hub.event',
      ),
    );
  }
  const rule = BY_LOWER.get(name.toLowerCase()) as EventRule;
  if (!Array.isArray(event.context)) {
    fail(badRequest('The event needs a context array', 'event.context'));
  }
  const context = event.context as unknown[];
  context.forEach((item, i) => {
    if (!isObject(item) || typeof item.key !== 'string') {
      fail(badRequest('Each context item needs a key', `event.context[${i}].key`));
    }
  });
  const items = context as ContextItem[];
  for (const keyRule of rule.keys) {
    const found = items.map((item, i) => ({ item, i })).filter(({ item }) => item.key === keyRule.key);
    if (found.length < keyRule.min) {
      fail(badRequest(`${name} requires context "${keyRule.key}" (${keyRule.type})`, 'event.context'));
    }
    if (keyRule.max === 1 && found.length > 1) {
      fail(badRequest(`${name} allows one context "${keyRule.key}", got ${found.length}`, 'event.context'));
    }
    for (const { item, i } of found) {
      checkItem(keyRule, item, `event.context[${i}]`);
    }
  }
  const versionId = event['context.versionId'];
  const priorVersionId = event['context.priorVersionId'];
  if (name === 'DiagnosticReport-update') {
    if (typeof versionId !== 'string' || versionId === '') {
      fail(
        badRequest('DiagnosticReport-update requires context.versionId (the new version)', 'event.context.versionId'),
      );
    }
    if (typeof priorVersionId !== 'string' || priorVersionId === '') {
      fail(
        badRequest(
          'DiagnosticReport-update requires context.priorVersionId (the version it updates)',
          'event.context.priorVersionId',
        ),
      );
    }
  }
  return {
    timestamp: body.timestamp,
    id: body.id,
    event: {
      'hub.topic': topic,
      'hub.event': name,
      context: items,
      ...(typeof versionId === 'string' ? { 'context.versionId': versionId } : {}),
      ...(typeof priorVersionId === 'string' ? { 'context.priorVersionId': priorVersionId } : {}),
    },
  };
}

/** The context item with a key, if any. */
export function contextItem(event: FhircastEvent, key: string): ContextItem | undefined {
  return event.event.context.find((c) => c.key === key);
}
