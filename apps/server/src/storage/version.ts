// A new stored version as a write builds it, and what the write answers and tells listeners.
import { conflict, type OperationOutcome, type Resource } from '@hearth/core';
import { shown } from './access-guard.js';
import type { StorageContext } from './context.js';
import { buildStoredVersion, parseStored } from './serialize.js';
import type { CurrentRow } from './sql/versions.js';
import type { StoredVersion, WriteEvent, WriteResult } from './types.js';

/** One version to write, with the row it replaces (none: a create). */
export interface WriteItem {
  version: StoredVersion;
  interaction: WriteEvent['interaction'];
  previous?: CurrentRow;
}

export function buildVersion(
  ctx: StorageContext,
  resource: Resource,
  id: string,
  projectId: string,
  versionId: number,
  lastUpdated = ctx.now(),
): StoredVersion {
  return buildStoredVersion({
    resource,
    id,
    projectId,
    versionId,
    lastUpdated,
    author: ctx.scope.author,
    compartments: (r) => ctx.deps.indexer.compartmentsOf(r),
  });
}

/** lastUpdated never goes backwards within one resource's history, whatever the clocks do. */
export function laterThan(ctx: StorageContext, previous: Date): Date {
  const now = ctx.now();
  return now > previous ? now : new Date(previous.getTime() + 1);
}

export function toWriteResult(ctx: StorageContext, version: StoredVersion, created: boolean): WriteResult {
  return shown(
    ctx.scope,
    {
      resource: version.resource as Resource,
      content: version.content,
      versionId: version.versionId,
      lastUpdated: version.lastUpdated,
      created,
    },
    version.resourceType,
  );
}

/**
 * An id is taken on the whole server, whichever project holds it (a deleted resource's too: its
 * history still answers to it). The answer never says which project that is.
 */
export function idTaken(resourceType: string, id: string): OperationOutcome {
  return conflict(
    `${resourceType}/${id} already exists: an id names one ${resourceType} on this server, so this one cannot be created; choose another id`,
    'duplicate',
    `${resourceType}.id`,
  );
}

/** The unique key refused a write of `versions` (which one, PostgreSQL says only in its own words). */
export function idsTaken(versions: StoredVersion[]): OperationOutcome {
  return versions.length === 1
    ? idTaken(versions[0].resourceType, versions[0].id)
    : conflict('A resource with one of these ids already exists on this server');
}

export function toEvent(item: WriteItem): WriteEvent {
  return {
    interaction: item.interaction,
    version: item.version,
    previous: item.previous ? currentRowToVersion(item.previous) : undefined,
  };
}

function currentRowToVersion(row: CurrentRow): StoredVersion {
  return {
    resourceType: row.resourceType,
    id: row.id,
    projectId: row.projectId,
    versionId: row.versionId,
    lastUpdated: row.lastUpdated,
    deleted: row.deleted,
    content: row.content,
    resource: row.deleted || !row.content ? undefined : parseStored(row.content),
    compartments: [],
  };
}
