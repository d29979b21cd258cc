// Reads of current and past versions (hl7.org/fhir/R4/http.html#read and #vread), under the scope's
// projects and access rules.
import { fail, goneWith, isValidId, notFoundWith, type Resource } from '@hearth/core';
import { shown, visibleTo } from './access-guard.js';
import { assertStoredType, type StorageContext } from './context.js';
import { parseStored } from './serialize.js';
import { selectCurrent, selectCurrentMany, selectVersion, type CurrentRow } from './sql/versions.js';
import type { AccessInteraction, ReadResult } from './types.js';

/** The current row of a resource, deleted or not; 404 when it never existed or is not visible. */
export async function readCurrentRow(
  ctx: StorageContext,
  resourceType: string,
  id: string,
  interaction: AccessInteraction = 'read',
): Promise<CurrentRow> {
  assertStoredType(resourceType);
  const condition = visibleTo(ctx.scope, resourceType, interaction);
  if (!isValidId(id)) {
    fail(notFoundWith(`${resourceType}/${id} not found`));
  }
  const row = await selectCurrent(ctx.db, resourceType, id, ctx.projects, false, condition);
  if (!row) {
    fail(notFoundWith(`${resourceType}/${id} not found`));
  }
  return row;
}

export async function readResource(ctx: StorageContext, resourceType: string, id: string): Promise<ReadResult> {
  const row = await readCurrentRow(ctx, resourceType, id);
  if (row.deleted) {
    fail(goneWith(`${resourceType}/${id} was deleted`));
  }
  return shown(ctx.scope, readResultOf(row), resourceType);
}

/** Reads many resources of one type; missing and deleted ones are left out. */
export async function readResources(
  ctx: StorageContext,
  resourceType: string,
  ids: string[],
  interaction: AccessInteraction = 'read',
): Promise<ReadResult[]> {
  assertStoredType(resourceType);
  const condition = visibleTo(ctx.scope, resourceType, interaction);
  const rows = await selectCurrentMany(ctx.db, resourceType, ids.filter(isValidId), ctx.projects, condition);
  return rows.filter((r) => !r.deleted).map((r) => shown(ctx.scope, readResultOf(r), resourceType));
}

export async function readVersion(
  ctx: StorageContext,
  resourceType: string,
  id: string,
  versionId: string,
): Promise<ReadResult> {
  assertStoredType(resourceType);
  const vid = Number(versionId);
  if (!isValidId(id) || !Number.isInteger(vid) || vid < 1 || vid > 2 ** 31 - 1) {
    fail(notFoundWith(`${resourceType}/${id}/_history/${versionId} not found`));
  }
  const condition = visibleTo(ctx.scope, resourceType, 'vread');
  const row = await selectVersion(ctx.db, resourceType, id, vid, ctx.projects, condition);
  if (!row) {
    fail(notFoundWith(`${resourceType}/${id}/_history/${versionId} not found`));
  }
  if (row.deleted) {
    fail(goneWith(`${resourceType}/${id}/_history/${versionId} is a deletion`));
  }
  return shown(ctx.scope, readResultOf(row), resourceType);
}

/**
 * A read result whose resource is parsed only when something asks for it: a plain read serves the
 * stored text as it is, so most reads never parse at all.
 */
function readResultOf(row: CurrentRow): ReadResult {
  let parsed: Resource | undefined;
  return {
    get resource(): Resource {
      parsed ??= parseStored(row.content);
      return parsed;
    },
    content: row.content,
    versionId: row.versionId,
    lastUpdated: row.lastUpdated,
  };
}
