// An access as a standard AuditEvent (hl7.org/fhir/R4/auditevent.html), and the columns the
// trail searches it by.
import { randomFillSync } from 'node:crypto';
import { v7 as timeOrderedUuid } from 'uuid';
import type { AuditAccess, AuditRequestInfo, EventColumns, TrailEvent } from './types.js';

const EVENT_TYPE = 'http://terminology.hl7.org/CodeSystem/audit-event-type';
const RESTFUL = 'http://hl7.org/fhir/restful-interaction';
const OPERATION = 'https://hearth.dev/fhir/CodeSystem/operation';
const ENTITY_TYPE = 'http://terminology.hl7.org/CodeSystem/audit-entity-type';
const OBJECT_ROLE = 'http://terminology.hl7.org/CodeSystem/object-role';
export const EXT_USER_AGENT = 'https://hearth.dev/fhir/StructureDefinition/audit-user-agent';
export const EXT_REQUEST_ID = 'https://hearth.dev/fhir/StructureDefinition/audit-request-id';
export const EXT_STATUS = 'https://hearth.dev/fhir/StructureDefinition/audit-http-status';

/** AuditEvent.outcome from an HTTP status: 0 success, 4 minor failure (the client's), 8 serious (the server's). */
export function outcomeOf(status: number): '0' | '4' | '8' {
  return status < 400 ? '0' : status < 500 ? '4' : '8';
}

/** How much of a caller's User-Agent header an entry keeps. */
export const USER_AGENT_LIMIT = 500;

/** The AuditEvent of one access (`id`: the entry's, when it has one already: stored-entry.ts). */
export function buildAuditEvent(request: AuditRequestInfo, access: AuditAccess, id = newEntryId()): TrailEvent {
  const { agent } = request;
  const agents: Record<string, unknown>[] = [
    {
      type: { coding: [{ system: EVENT_TYPE, code: 'rest' }], text: 'caller' },
      who: agent.profile
        ? { reference: agent.profile, ...(agent.profileDisplay ? { display: agent.profileDisplay } : {}) }
        : { display: 'anonymous' },
      ...(agent.login ? { altId: agent.login } : {}),
      requestor: true,
      ...(request.address ? { network: { address: request.address, type: '2' } } : {}),
      ...(request.userAgent
        ? { extension: [{ url: EXT_USER_AGENT, valueString: request.userAgent.slice(0, USER_AGENT_LIMIT) }] }
        : {}),
    },
  ];
  if (agent.membership) {
    agents.push({ type: { text: 'membership' }, who: { reference: agent.membership }, requestor: false });
  }
  if (agent.login && agent.login !== agent.profile) {
    agents.push({ type: { text: 'login' }, who: { reference: agent.login }, requestor: false });
  }
  const entities: Record<string, unknown>[] = [];
  if (access.resourceType && access.id) {
    const reference = `${access.resourceType}/${access.id}${access.versionId ? `/_history/${access.versionId}` : ''}`;
    entities.push({
      what: { reference: `${access.resourceType}/${access.id}` },
      type: { system: ENTITY_TYPE, code: '2', display: 'System Object' },
      role: { system: OBJECT_ROLE, code: '4', display: 'Domain Resource' },
      ...(access.versionId ? { name: reference } : {}),
    });
  } else if (access.resourceType || access.query !== undefined) {
    entities.push({
      ...(access.resourceType ? { what: { display: access.resourceType } } : {}),
      type: { system: ENTITY_TYPE, code: '2', display: 'System Object' },
      role: { system: OBJECT_ROLE, code: '24', display: 'Query' },
      ...(access.query !== undefined ? { query: Buffer.from(access.query).toString('base64') } : {}),
      ...(access.count !== undefined ? { detail: [{ type: 'count', valueString: String(access.count) }] } : {}),
    });
  }
  for (const patient of access.patients) {
    if (patient !== `${access.resourceType}/${access.id}`) {
      entities.push({
        what: { reference: patient },
        type: { system: ENTITY_TYPE, code: '1', display: 'Person' },
        role: { system: OBJECT_ROLE, code: '1', display: 'Patient' },
      });
    }
  }
  const subtype = access.operation
    ? { system: OPERATION, code: access.operation, display: `$${access.operation}` }
    : { system: RESTFUL, code: access.interaction };
  return {
    resourceType: 'AuditEvent',
    id,
    meta: { project: request.projectId },
    type: { system: EVENT_TYPE, code: 'rest', display: 'RESTful Operation' },
    subtype: [subtype],
    action: access.action,
    recorded: access.recorded.toISOString(),
    outcome: outcomeOf(access.status),
    outcomeDesc: String(access.status),
    extension: [
      { url: EXT_REQUEST_ID, valueString: request.requestId },
      { url: EXT_STATUS, valueInteger: access.status },
    ],
    agent: agents,
    source: {
      site: request.projectId,
      observer: { display: 'Hearth' },
      type: [
        { system: 'http://terminology.hl7.org/CodeSystem/security-source-type', code: '3', display: 'Web Server' },
      ],
    },
    ...(entities.length ? { entity: entities } : {}),
  } as TrailEvent;
}

export function columnsOf(event: TrailEvent): EventColumns {
  const agent = unique((event.agent ?? []).map((a) => a.who?.reference));
  const entity = unique((event.entity ?? []).map((e) => e.what?.reference));
  return {
    action: event.action ?? 'E',
    outcome: event.outcome ?? '0',
    typeCode: event.type?.code ?? '',
    agent,
    entity,
    patient: entity.filter((r) => r.startsWith('Patient/')),
  };
}

/**
 * columnsOf(buildAuditEvent(request, access)) without building the event: the agents' and the
 * entities' references, as buildAuditEvent names them (audit-event.test.ts holds the two equal).
 */
export function columnsOfAccess(request: AuditRequestInfo, access: AuditAccess): EventColumns {
  const { agent } = request;
  const target = access.resourceType && access.id ? `${access.resourceType}/${access.id}` : undefined;
  const entity = unique([target, ...access.patients]);
  return {
    action: access.action,
    outcome: outcomeOf(access.status),
    typeCode: 'rest',
    agent: unique([agent.profile, agent.membership, agent.login]),
    entity,
    patient: entity.filter((r) => r.startsWith('Patient/')),
  };
}

function unique(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v !== ''))];
}

/**
 * A fresh id for an entry (a stored AuditEvent mirrored into the trail keeps its own): a
 * time-ordered (version 7) UUID, so that the id index grows at its end like the trail itself. With
 * random ids every entry dirtied a random page of an index as large as the month's entries.
 */
export function newEntryId(): string {
  return timeOrderedUuid({ random: randomBytes16() });
}

/**
 * 16 random bytes from a pool refilled 256 ids at a time: the uuid package asks the system for
 * each id's bytes (crypto.getRandomValues, one system call, 5 µs here and 30 µs under load).
 */
const RANDOM_POOL = Buffer.alloc(16 * 256);
let poolAt = RANDOM_POOL.length;
function randomBytes16(): Uint8Array {
  if (poolAt === RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    poolAt = 0;
  }
  poolAt += 16;
  return RANDOM_POOL.subarray(poolAt - 16, poolAt);
}
