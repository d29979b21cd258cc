// The fast paths of create and update: a whole write as ONE autocommit statement (resource row,
// history row and index rows), one round trip instead of BEGIN, the writes and COMMIT.
import { fail, forbiddenWith, OperationOutcomeError, type Resource } from '@hearth/core';
import { pgErrorCode, preparedName, PG_UNIQUE_VIOLATION } from '../platform/postgres.js';
import { guardedInput, needsWriteCheck, writableBy } from './access-guard.js';
import type { StorageContext } from './context.js';
import { newVersionsParts } from './sql/new-versions.js';
import { newVersionParts, replaceVersionParts, selectCurrentToWrite } from './sql/versions.js';
import type { StoredVersion, WriteOptions, WriteResult } from './types.js';
import { buildVersion, idsTaken, laterThan, toEvent, toWriteResult } from './version.js';

/**
 * Writes new resources' current rows, history rows and index rows in ONE statement, outside any
 * transaction (a single statement is atomic). Returns false, having written nothing, where that
 * does not apply: inside a caller's transaction, when an access policy's write condition must
 * check the written rows before COMMIT, or when the indexer needs more than rows (a
 * SearchParameter reindexes its project).
 */
export async function createInOneStatement(ctx: StorageContext, versions: StoredVersion[]): Promise<boolean> {
  const indexer = ctx.deps.indexer;
  if (
    ctx.client ||
    !indexer.newResourceParts ||
    versions.some((v) => needsWriteCheck(ctx.scope, v.resourceType, v.projectId))
  ) {
    return false;
  }
  const values: unknown[] = [];
  const param = (value: unknown, cast: string): string => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  // One resource (every single create): scalar values, the statement its plans were measured with.
  const versionParts = versions.length === 1 ? newVersionParts(versions[0], param) : newVersionsParts(versions, param);
  const indexParts = await indexer.newResourceParts(ctx.deps.pool, versions, param);
  if (!indexParts) {
    return false;
  }
  const text = `WITH ${[...versionParts, ...indexParts].join(',\n')} SELECT 1`;
  try {
    await ctx.deps.pool.query({ name: preparedName('hearth_create', text), text, values });
  } catch (err) {
    if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) {
      throw new OperationOutcomeError(idsTaken(versions), err);
    }
    throw err;
  }
  ctx.emit(versions.map((version) => toEvent({ version, interaction: 'create' })));
  return true;
}

/**
 * An update of an existing resource as one read and ONE autocommit statement (current row, history
 * row and changed index rows), instead of BEGIN, a locking read, two writes and COMMIT. The write
 * applies only if the row is still the one read; when it is not (a concurrent write won), or
 * where this does not apply (inside a caller's transaction, a deleted or missing resource, a write
 * condition to check in the database, a SearchParameter or terminology resource), it returns
 * undefined having written nothing, and the locking path runs.
 */
export async function updateInOneStatement(
  ctx: StorageContext,
  resource: Resource,
  id: string,
  options: WriteOptions,
  stale: () => never,
): Promise<WriteResult | undefined> {
  const indexer = ctx.deps.indexer;
  if (ctx.client || !indexer.replacedResourceParts) {
    return undefined;
  }
  const { resourceType } = resource;
  const current = await selectCurrentToWrite(
    ctx.deps.pool,
    resourceType,
    id,
    ctx.projects,
    writableBy(ctx.scope, resourceType),
    false,
  );
  if (!current || current.deleted || needsWriteCheck(ctx.scope, resourceType, current.projectId)) {
    return undefined;
  }
  if (options.ifMatch !== undefined && current.versionId !== options.ifMatch) {
    stale();
  }
  if (!current.allowed) {
    fail(forbiddenWith(`Not allowed to modify ${resourceType}/${id}`));
  }
  const input = guardedInput(ctx.scope, resource, current);
  const version = buildVersion(
    ctx,
    input,
    id,
    current.projectId,
    current.versionId + 1,
    laterThan(ctx, current.lastUpdated),
  );
  version.replaces = current.content;
  const values: unknown[] = [];
  const param = (value: unknown, cast: string): string => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const { parts, written } = replaceVersionParts(version, current, param);
  const indexParts = await indexer.replacedResourceParts(ctx.deps.pool, version, param, written);
  if (!indexParts) {
    return undefined;
  }
  const text = `WITH ${[...parts, ...indexParts].join(',\n')} SELECT ${written} AS written`;
  const result = await ctx.deps.pool.query<{ written: boolean }>({
    name: preparedName('hearth_update', text),
    text,
    values,
  });
  if (!result.rows[0]?.written) {
    return undefined;
  }
  ctx.emit([toEvent({ version, interaction: 'update', previous: current })]);
  return toWriteResult(ctx, version, false);
}
