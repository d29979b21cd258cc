// What the trail knows about the request in progress, carried through its async work
// (AsyncLocalStorage), so that storage's write path can record a write's entry in the write's own
// statement or transaction without knowing about requests.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SearchIndexer, StoredVersion } from '../storage/types.js';
import type { Queryable } from '../platform/postgres.js';
import { entryOfAccess } from './stored-entry.js';
import type { AuditMode, AuditRequestInfo } from './types.js';

/** One request's audit state. */
export class RequestAudit {
  /** Set once the caller is known (after authentication). */
  info: AuditRequestInfo | undefined;
  mode: AuditMode = 'off';
  /** The REST interaction, when the route says (PATCH is recorded as patch, not update). */
  interaction: string | undefined;
  /** Entries written durably with the request's writes. */
  durableWrites = 0;
  /** The response body, when it was text (scanned for patients after the response is sent). */
  payload: string | undefined;
  /** False once the response is sent: work the request started that outlives it is not the caller's. */
  open = true;

  constructor(readonly started: Date) {}
}

export class AuditCapture {
  private readonly storage = new AsyncLocalStorage<RequestAudit>();

  /** Runs `fn` (the rest of the request) with `audit` as its state. */
  run(audit: RequestAudit, fn: () => void): void {
    this.storage.run(audit, fn);
  }

  current(): RequestAudit | undefined {
    const audit = this.storage.getStore();
    return audit?.open && audit.info && audit.mode !== 'off' ? audit : undefined;
  }
}

/** The outbox rows a batch of written versions adds: the request's writes, and stored AuditEvents mirrored. */
export function outboxRows(
  capture: AuditCapture,
  versions: StoredVersion[],
  onPatient: (projectId: string) => void,
): { projects: string[]; entries: string[] } {
  const audit = capture.current();
  const projects: string[] = [];
  const entries: string[] = [];
  for (const v of versions) {
    if (v.resourceType === 'Patient' && !v.deleted) onPatient(v.projectId);
    if (v.resourceType === 'AuditEvent' && v.resource && !v.deleted) {
      // Sign-ins and deliveries, stored as AuditEvent resources, join the trail as they are.
      projects.push(v.projectId);
      entries.push(v.content);
      continue;
    }
    if (!audit?.info) continue;
    const interaction = v.deleted
      ? 'delete'
      : v.versionId === 1
        ? 'create'
        : audit.interaction === 'patch'
          ? 'patch'
          : 'update';
    const entry = entryOfAccess(audit.info, {
      interaction,
      action: v.deleted ? 'D' : interaction === 'create' ? 'C' : 'U',
      resourceType: v.resourceType,
      id: v.id,
      versionId: v.versionId,
      patients: v.compartments.filter((c) => c.startsWith('Patient/')),
      status: interaction === 'create' ? 201 : 200,
      recorded: v.lastUpdated,
    });
    audit.durableWrites++;
    projects.push(v.projectId);
    entries.push(entry.content);
  }
  return { projects, entries };
}

const OUTBOX_INSERT = 'INSERT INTO audit_outbox (project_id, entry) SELECT * FROM unnest($1::uuid[], $2::text[])';

/**
 * The indexer with the trail's outbox row added to every write: a CTE of the one-statement
 * create and update, an INSERT in the transaction of the others. The entry commits with the
 * write or not at all, so an acknowledged write's entry survives a crash.
 */
export function withAuditOutbox(
  inner: SearchIndexer,
  capture: AuditCapture,
  onPatient: (projectId: string) => void,
): SearchIndexer {
  const part = (
    rows: { projects: string[]; entries: string[] },
    param: (v: unknown, c: string) => string,
    guard?: string,
  ) =>
    `hearth_audit_outbox AS (INSERT INTO audit_outbox (project_id, entry) SELECT * FROM unnest(${param(rows.projects, 'uuid[]')}, ${param(rows.entries, 'text[]')})${guard ? ` WHERE ${guard}` : ''})`;
  return {
    compartmentsOf: (resource) => inner.compartmentsOf(resource),
    newResourceParts: inner.newResourceParts
      ? async (db: Queryable, versions, param) => {
          const parts = await inner.newResourceParts?.(db, versions, param);
          if (!parts) return undefined;
          const rows = outboxRows(capture, versions, onPatient);
          return rows.entries.length ? [...parts, part(rows, param)] : parts;
        }
      : undefined,
    replacedResourceParts: inner.replacedResourceParts
      ? async (db: Queryable, version, param, guard) => {
          const parts = await inner.replacedResourceParts?.(db, version, param, guard);
          if (!parts) return undefined;
          const rows = outboxRows(capture, [version], onPatient);
          return rows.entries.length ? [...parts, part(rows, param, guard)] : parts;
        }
      : undefined,
    copyRows: inner.copyRows
      ? async (client, versions) => {
          if (!(await inner.copyRows?.(client, versions))) return false;
          const rows = outboxRows(capture, versions, onPatient);
          if (rows.entries.length) {
            await client.query(OUTBOX_INSERT, [rows.projects, rows.entries]);
          }
          return true;
        }
      : undefined,
    async index(client, versions) {
      await inner.index(client, versions);
      const rows = outboxRows(capture, versions, onPatient);
      if (rows.entries.length) {
        await client.query(OUTBOX_INSERT, [rows.projects, rows.entries]);
      }
    },
  };
}
