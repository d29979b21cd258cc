// Bulk writes ($import): many resources that carry their own ids, each validated, guarded and
// indexed exactly as a single write, written a batch at a time in one transaction through COPY
// (storage/sql/bulk.ts, search/index/copy-writer.ts) instead of a statement per resource.
import {
  badRequest,
  fail,
  forbiddenWith,
  isValidId,
  OperationOutcomeError,
  type OperationOutcome,
  type Resource,
} from '@hearth/core';
import { isConnectionError, pgErrorCode, withTransaction, type PoolClient } from '../platform/postgres.js';
import { guardedInput, verifyWritten, writableBy } from './access-guard.js';
import { assertStoredType, type StorageContext } from './context.js';
import { lockCurrentMany, writeVersionsByCopy, type LockedRow } from './sql/bulk.js';
import type { StoredVersion } from './types.js';
import { buildVersion, idTaken, laterThan, toEvent, type WriteItem } from './version.js';
import { checkDeclaredProfiles, createMany, enforcesProfiles, updateResource, validate } from './write.js';

/** How many resources are checked between two turns of the event loop (a batch's write runs meanwhile). */
const YIELD_EVERY = 5;

/** One resource of a batch after the checks a create makes (prepareBulk). */
interface PreparedItem {
  /** As given (with its id). */
  resource: Resource;
  /** As a create writes it (access guard applied, validated): version 1 in the caller's project. */
  version?: StoredVersion;
  /** The guard changed nothing, so the resource as given is what was validated. */
  validatedAsGiven?: boolean;
  /** Why it cannot be created (the guard refused a create); an update of an existing row may still be allowed. */
  createRefused?: OperationOutcome;
  /** Why it cannot be written at all. */
  outcome?: OperationOutcome;
}

/** A batch checked and built, ready for writeBulk. */
export interface PreparedBulk {
  items: PreparedItem[];
  /** Whether the project enforces profiles (write.ts: enforcesProfiles), read once for the batch. */
  enforced: boolean;
}

/** What became of one resource of a batch: written (created, or a new version of a stored one), or why not. */
export type BulkResult = { created: boolean; outcome?: undefined } | { created?: undefined; outcome: OperationOutcome };

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function outcomeOf(err: unknown): OperationOutcome {
  if (err instanceof OperationOutcomeError) return err.outcome;
  throw err;
}

/**
 * The checks of a create, per resource, and its version 1 (meta, stored JSON, compartments and
 * index rows, which the indexer keeps for the write): CPU only, with a turn of the event loop every
 * few resources so that the previous batch's write proceeds meanwhile. A resource refused here
 * carries its OperationOutcome; the others are not affected.
 */
export async function prepareBulk(ctx: StorageContext, resources: Resource[]): Promise<PreparedBulk> {
  const items: PreparedItem[] = [];
  const enforced = await enforcesProfiles(ctx);
  for (const [i, resource] of resources.entries()) {
    if (i > 0 && i % YIELD_EVERY === 0) await nextTurn();
    try {
      assertStoredType(resource.resourceType);
      if (!isValidId(resource.id)) {
        fail(badRequest('Resource id is missing or invalid', `${resource.resourceType}.id`));
      }
      let input: Resource;
      try {
        input = guardedInput(ctx.scope, resource, undefined);
      } catch (err) {
        // Not allowed to create: an existing resource of that id may still be updated (writeBulk decides).
        validate(ctx, resource, enforced);
        items.push({ resource, createRefused: outcomeOf(err), validatedAsGiven: true });
        continue;
      }
      validate(ctx, input, enforced);
      await checkDeclaredProfiles(ctx, input, enforced);
      const version = buildVersion(ctx, input, resource.id, ctx.scope.projectId, 1);
      items.push({ resource, version, validatedAsGiven: input === resource });
    } catch (err) {
      items.push({ resource, outcome: outcomeOf(err) });
    }
  }
  return { items, enforced };
}

/** Thrown inside the batch's transaction to roll it back and write the batch the ordinary way. */
class NotInBulk extends Error {}

/**
 * Writes a prepared batch: in ONE transaction when it can (the stored rows of its ids locked;
 * new ids created, stored ones given a new version, as PUT with a client id would; index rows
 * through the indexer's COPY), telling listeners after the COMMIT. Where that does not apply
 * (inside a caller's transaction, a type whose writes need more than rows) or fails (a concurrent
 * create of one of the ids, a row the access policy's write condition refuses, a value the
 * database refuses), it rolls back and writes the batch the ordinary way, so that each resource
 * gets its own verdict and a failing one never costs the others.
 */
export async function writeBulk(ctx: StorageContext, prepared: PreparedBulk): Promise<BulkResult[]> {
  const { items } = prepared;
  if (!ctx.client && ctx.deps.indexer.copyRows && items.some((i) => !i.outcome)) {
    try {
      const events: WriteItem[] = [];
      const results = await withTransaction(ctx.deps.pool, (client) =>
        writeInTransaction(ctx, client, prepared, events),
      );
      ctx.emit(events.map(toEvent));
      return results;
    } catch (err) {
      // Refused as a whole (NotInBulk, the write condition, a database error): each resource again
      // on its own, below. Anything else is a fault, not a verdict on the data.
      if (!(err instanceof NotInBulk || err instanceof OperationOutcomeError) && !pgErrorCode(err)) throw err;
      if (isConnectionError(err)) throw err;
    }
  }
  return writeEach(ctx, items);
}

async function writeInTransaction(
  ctx: StorageContext,
  client: PoolClient,
  { items, enforced }: PreparedBulk,
  events: WriteItem[],
): Promise<BulkResult[]> {
  const results: BulkResult[] = items.map((i) => (i.outcome ? { outcome: i.outcome } : { created: true }));
  const byType = new Map<string, number[]>();
  items.forEach((item, i) => {
    if (item.outcome) return;
    const list = byType.get(item.resource.resourceType);
    if (list) list.push(i);
    else byType.set(item.resource.resourceType, [i]);
  });
  const versions: { type: string; created: StoredVersion[]; replaced: StoredVersion[] }[] = [];
  for (const [type, indexes] of byType) {
    const current = await lockCurrentMany(
      client,
      type,
      indexes.map((i) => items[i].resource.id as string),
      writableBy(ctx.scope, type),
    );
    const created: StoredVersion[] = [];
    const replaced: StoredVersion[] = [];
    for (const i of indexes) {
      const item = items[i];
      const row = current.get(item.resource.id as string);
      try {
        if (!row) {
          if (item.createRefused) fail(item.createRefused);
          const version = item.version as StoredVersion;
          created.push(version);
          events.push({ version, interaction: 'create' });
          continue;
        }
        const version = newVersionOf(ctx, item, row, enforced);
        replaced.push(version);
        results[i] = { created: row.deleted };
        events.push({ version, interaction: row.deleted ? 'create' : 'update', previous: row });
      } catch (err) {
        results[i] = { outcome: outcomeOf(err) };
      }
    }
    versions.push({ type, created, replaced });
  }
  const all = versions.flatMap((v) => [...v.created, ...v.replaced]);
  if (all.length === 0) return results;
  if (!(await ctx.deps.indexer.copyRows?.(client, all))) throw new NotInBulk();
  for (const { type, created, replaced } of versions) {
    await writeVersionsByCopy(client, type, created, replaced);
  }
  await verifyWritten(ctx.scope, client, all);
  return results;
}

/**
 * The next version of a stored resource, as an update builds it (write.ts: updateResource): an id
 * another project holds is a conflict, a row the write condition refuses is forbidden, and
 * lastUpdated never goes back.
 */
function newVersionOf(ctx: StorageContext, item: PreparedItem, row: LockedRow, enforced: boolean): StoredVersion {
  const { resourceType, id } = row;
  if (ctx.projects && !ctx.projects.includes(row.projectId)) {
    fail(idTaken(resourceType, id));
  }
  if (!row.deleted && !row.allowed) {
    fail(forbiddenWith(`Not allowed to modify ${resourceType}/${id}`));
  }
  // An update validates the resource as given; the create's checks validated it with the create's guard.
  if (!item.validatedAsGiven) validate(ctx, item.resource, enforced);
  const input = guardedInput(ctx.scope, item.resource, row);
  return buildVersion(ctx, input, id, row.projectId, row.versionId + 1, laterThan(ctx, row.lastUpdated));
}

/**
 * The ordinary write path for a batch: all at once (createMany: one statement, or one
 * transaction through the indexer), and when that is refused, each resource as PUT with its id
 * (create or update), each with its own verdict.
 */
async function writeEach(ctx: StorageContext, items: PreparedItem[]): Promise<BulkResult[]> {
  const results: BulkResult[] = items.map((i) => (i.outcome ? { outcome: i.outcome } : { created: true }));
  const pending = items.flatMap((item, i) => (item.outcome ? [] : [i]));
  if (pending.length === 0) return results;
  try {
    await createMany(
      ctx,
      pending.map((i) => items[i].resource),
    );
    return results;
  } catch (err) {
    if (isConnectionError(err)) throw err;
  }
  for (const i of pending) {
    try {
      results[i] = { created: (await updateResource(ctx, items[i].resource)).created };
    } catch (err) {
      if (err instanceof OperationOutcomeError) {
        results[i] = { outcome: err.outcome };
      } else if (isConnectionError(err)) {
        throw err;
      } else {
        // A value the database refuses (an index key too large, say): this resource only.
        results[i] = { outcome: notStored(err) };
      }
    }
  }
  return results;
}

function notStored(err: unknown): OperationOutcome {
  const code = pgErrorCode(err);
  return {
    resourceType: 'OperationOutcome',
    issue: [
      {
        severity: 'error',
        code: 'exception',
        diagnostics: `The database refused to store it${code ? ` (PostgreSQL error ${code})` : ''}`,
      },
    ],
  };
}
