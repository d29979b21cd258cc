import type { Resource, Subscription } from '@hearth/core';
import type { WriteEvent } from '../storage/types.js';

/**
 * Extensions on R4 Subscription understood here. The URLs are those of the platform the spec
 * describes (with and without "www."), so subscriptions written for it work unchanged.
 */
const EXT = {
  interaction: 'medplum.com/fhir/StructureDefinition/subscription-supported-interaction',
  fhirPath: 'medplum.com/fhir/StructureDefinition/fhir-path-criteria-expression',
  secret: 'medplum.com/fhir/StructureDefinition/subscription-secret',
  maxAttempts: 'medplum.com/fhir/StructureDefinition/subscription-max-attempts',
} as const;

export type Interaction = WriteEvent['interaction'];

interface Extension {
  url?: string;
  valueCode?: string;
  valueString?: string;
  valueInteger?: number;
}

function extensions(resource: { extension?: unknown }, suffix: string): Extension[] {
  const list = Array.isArray(resource.extension) ? (resource.extension as Extension[]) : [];
  return list.filter((e) => typeof e?.url === 'string' && e.url.replace(/^https?:\/\/(www\.)?/, '') === suffix);
}

export type ChannelKind = 'rest-hook' | 'websocket' | 'email' | 'bot';

/** What a notification carries (the R4 Subscriptions Backport IG's payload content codes). */
export type PayloadContent = 'empty' | 'id-only' | 'full-resource';

const PAYLOAD_CONTENT = 'hl7.org/fhir/uv/subscriptions-backport/StructureDefinition/backport-payload-content';

/**
 * The payload content of a subscription: the backport-payload-content extension on channel.payload
 * when given, else the whole resource when channel.payload names a MIME type, else nothing.
 */
export function payloadContent(sub: Subscription): PayloadContent {
  const channel = sub.channel as (Subscription['channel'] & { _payload?: { extension?: unknown } }) | undefined;
  const code = extensions(channel?._payload ?? {}, PAYLOAD_CONTENT)[0]?.valueCode;
  if (code === 'empty' || code === 'id-only' || code === 'full-resource') {
    return code;
  }
  return channel?.payload ? 'full-resource' : 'empty';
}

/** A Subscription as the evaluator needs it, parsed once when it is loaded. */
export interface ActiveSubscription {
  id: string;
  projectId: string;
  resource: Subscription;
  /** The resource type the criteria searches. */
  resourceType: string;
  /** The criteria's search parameters ('' for a bare type). */
  query: string;
  /** Interactions that fire it; undefined: all three. */
  interactions?: Set<Interaction>;
  /** FHIRPath filter with %current and %previous. */
  fhirPath?: string;
  channel: ChannelKind;
  /** Endpoint URL, mailto address or Bot reference. */
  endpoint?: string;
  /** The subscription's author: deliveries read as this member. */
  author?: string;
  secret?: string;
  maxAttempts?: number;
  payload: PayloadContent;
}

/** Splits "Patient?name=x" into the type and the query; undefined for a malformed criteria. */
export function splitCriteria(criteria: string | undefined): { resourceType: string; query: string } | undefined {
  const m = /^\s*([A-Z][A-Za-z]+)(?:\?(.*))?\s*$/.exec(criteria ?? '');
  return m ? { resourceType: m[1], query: m[2] ?? '' } : undefined;
}

/** Parses a stored Subscription; undefined when it is not active or cannot fire. */
export function parseSubscription(resource: Resource): ActiveSubscription | undefined {
  const sub = resource as unknown as Subscription;
  if (sub.status !== 'active' || !sub.id || !sub.meta?.project) {
    return undefined;
  }
  if (sub.end && Date.parse(sub.end) < Date.now()) {
    return undefined;
  }
  const criteria = splitCriteria(sub.criteria);
  if (!criteria) {
    return undefined;
  }
  const endpoint = sub.channel?.endpoint;
  let channel: ChannelKind;
  switch (sub.channel?.type) {
    case 'rest-hook':
      channel = endpoint?.startsWith('Bot/') ? 'bot' : 'rest-hook';
      break;
    case 'websocket':
      channel = 'websocket';
      break;
    case 'email':
      channel = 'email';
      break;
    default:
      return undefined;
  }
  const interactions = extensions(sub, EXT.interaction)
    .map((e) => e.valueCode)
    .filter((c): c is Interaction => c === 'create' || c === 'update' || c === 'delete');
  const fhirPath = extensions(sub, EXT.fhirPath)[0]?.valueString;
  const secret = extensions(sub, EXT.secret)[0]?.valueString;
  const maxAttempts = extensions(sub, EXT.maxAttempts)[0]?.valueInteger;
  return {
    id: sub.id,
    projectId: sub.meta.project,
    resource: sub,
    resourceType: criteria.resourceType,
    query: criteria.query,
    interactions: interactions.length > 0 ? new Set(interactions) : undefined,
    fhirPath: fhirPath?.trim() || undefined,
    channel,
    endpoint,
    author: sub.meta.author?.reference,
    secret,
    maxAttempts: typeof maxAttempts === 'number' && maxAttempts >= 1 ? Math.min(maxAttempts, 20) : undefined,
    payload: payloadContent(sub),
  };
}

/** One committed change, as queued for evaluation (small: the resource is read again by the job). */
export interface ChangeEvent {
  projectId: string;
  resourceType: string;
  id: string;
  /** The version written (for a delete: the deletion's version). */
  versionId: number;
  /** The version before it, if any (a delete is evaluated against it). */
  previousVersionId?: number;
  interaction: Interaction;
  /** $resend: only this subscription, and whatever its interaction filter says. */
  onlySubscription?: string;
  /** $resend: a new id for each resend, so its notification is not taken for a duplicate. */
  resendId?: string;
  /** The version written, as stored, when small (the evaluation then need not read it again). */
  content?: string;
}
