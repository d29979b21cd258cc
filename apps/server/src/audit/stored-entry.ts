// How an entry is stored: the request's and the access's facts as compact JSON (a few hundred
// bytes), not the AuditEvent they are served as (about 1.6 kB, mostly fixed codings). The event is
// built again from the facts when read (search, export, verification). Writing a third of the
// bytes is most of what an entry costs: the JSON, the hash, the COPY text and the database's row
// and WAL all scale with it (docs/compliance.md, "What it costs"). Stored AuditEvent resources
// mirrored into the trail (sign-ins, deliveries) are kept as they are.
import { buildAuditEvent, columnsOf, columnsOfAccess, newEntryId, USER_AGENT_LIMIT } from './audit-event.js';
import type { AuditAccess, AuditRequestInfo, TrailEntry, TrailEvent } from './types.js';

/** Format mark and version: stored content that starts with it holds facts, anything else an AuditEvent. */
const FACTS_MARK = '{"facts":1,';

/** What an entry stores: everything buildAuditEvent reads, with its id; the project is the row's. */
interface StoredFacts {
  facts: 1;
  id: string;
  request: Omit<AuditRequestInfo, 'projectId'>;
  access: Omit<AuditAccess, 'recorded'> & { recorded: string };
}

/** A request's access as an entry for the trail (the facts; the event is built when read). */
export function entryOfAccess(request: AuditRequestInfo, access: AuditAccess): TrailEntry {
  const id = newEntryId();
  const recorded = access.recorded.toISOString();
  const facts: StoredFacts = {
    facts: 1,
    id,
    request: {
      agent: request.agent,
      address: request.address,
      userAgent: request.userAgent?.slice(0, USER_AGENT_LIMIT),
      requestId: request.requestId,
    },
    access: { ...access, recorded },
  };
  return {
    projectId: request.projectId,
    id,
    recorded,
    columns: columnsOfAccess(request, access),
    content: JSON.stringify(facts),
  };
}

/** The AuditEvent a stored entry is served as. Throws on content that is not JSON. */
export function storedEvent(projectId: string, content: string): TrailEvent {
  if (!content.startsWith(FACTS_MARK)) return JSON.parse(content) as TrailEvent;
  const facts = JSON.parse(content) as StoredFacts;
  const access: AuditAccess = { ...facts.access, recorded: new Date(facts.access.recorded) };
  return buildAuditEvent({ ...facts.request, projectId }, access, facts.id);
}

/** The served AuditEvent's JSON text (what a search bundles). */
export function storedEventText(projectId: string, content: string): string {
  return content.startsWith(FACTS_MARK) ? JSON.stringify(storedEvent(projectId, content)) : content;
}

/** An entry from stored content (the outbox's, a mirrored AuditEvent's): its columns read from the event. */
export function entryOfStored(projectId: string, content: string): TrailEntry {
  const event = storedEvent(projectId, content);
  return { projectId, id: event.id, recorded: event.recorded, columns: columnsOf(event), content };
}
