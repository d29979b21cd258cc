// The write path (hl7.org/fhir/R4/http.html#create, #update, #delete): validation, meta and
// versioning, the access guard, and each write in one transaction with its index rows.
import {
  badRequest,
  conflict,
  fail,
  forbiddenWith,
  generateId,
  isValidId,
  notFoundWith,
  OperationOutcomeError,
  preconditionFailed,
  validationError,
  type OperationOutcomeIssue,
  type Resource,
} from '@hearth/core';
import { pgErrorCode, PG_UNIQUE_VIOLATION, type PoolClient } from '../platform/postgres.js';
import { guardedInput, verifyWritten, visibleTo, writableBy } from './access-guard.js';
import { assertStoredType, type StorageContext } from './context.js';
import { idHeldElsewhere, selectCurrentForUpdate, versionKey, writeVersions, type CurrentRow } from './sql/versions.js';
import { inWriteTransaction } from './transaction.js';
import type { StoredVersion, WriteOptions, WriteResult } from './types.js';
import { buildVersion, idsTaken, idTaken, laterThan, toEvent, toWriteResult, type WriteItem } from './version.js';
import { createInOneStatement, updateInOneStatement } from './write-one-statement.js';

/**
 * Updates lock the current row, so only a create through PUT can lose a race (to another create
 * of the same new id), and the retry then finds and locks the row: two attempts suffice; three is margin.
 */
const MAX_CREATE_RACES = 3;

const isError = (i: OperationOutcomeIssue) => i.severity === 'error' || i.severity === 'fatal';

/** The 422 of a resource that does not conform to a profile it must meet (hl7.org/fhir/R4/http.html#2.21.0.17.1). */
const unprocessable = (issues: OperationOutcomeIssue[]): never =>
  fail({ resourceType: 'OperationOutcome', id: 'unprocessable-entity', issue: issues });

/**
 * Whether the project of the write enforces profiles (setting enforceProfiles): then a write must
 * meet its declared profiles and the ones R4 requires by code (the vital signs). Read once per
 * write, or per batch, before the checks below.
 */
export async function enforcesProfiles(ctx: StorageContext): Promise<boolean> {
  return (await ctx.deps.profiles?.enforces(ctx.scope.projectId)) === true;
}

/**
 * Throws the 400 of a resource its definition rejects. With `enforced` (enforcesProfiles), one
 * run also checks the profiles R4 requires by code, and a resource that meets its definition but
 * not those profiles gets the 422 of a profile failure (the base-only run that tells them apart
 * happens on that failure only).
 */
export function validate(ctx: StorageContext, resource: Resource, enforced = false): void {
  const { validator } = ctx.deps;
  const issues = validator.validate(resource, { requiredProfiles: enforced });
  if (issues.some(isError)) {
    if (enforced && !validator.validate(resource).some(isError)) {
      unprocessable(issues);
    }
    fail(validationError(issues));
  }
}

/**
 * Throws the 422 of a resource that does not conform to the profiles its meta.profile declares,
 * when its project enforces them (`enforced`: enforcesProfiles).
 */
export async function checkDeclaredProfiles(ctx: StorageContext, resource: Resource, enforced: boolean): Promise<void> {
  if (!enforced || !ctx.deps.profiles || !resource.meta?.profile?.length) {
    return;
  }
  const issues = await ctx.deps.profiles.check(resource, ctx.scope.projectId);
  if (issues.some(isError)) {
    unprocessable(issues);
  }
}

/** The checks of a write: its definition and, where the project enforces them, its profiles. */
async function validateWrite(ctx: StorageContext, resource: Resource): Promise<void> {
  const enforced = await enforcesProfiles(ctx);
  validate(ctx, resource, enforced);
  await checkDeclaredProfiles(ctx, resource, enforced);
}

/** Creates a resource with a new server-assigned id. */
export async function createResource<T extends Resource>(
  ctx: StorageContext,
  resource: T,
): Promise<WriteResult & { resource: T }> {
  assertStoredType(resource.resourceType);
  const input = guardedInput(ctx.scope, { ...resource, id: generateId() }, undefined);
  await validateWrite(ctx, input);
  const version = buildVersion(ctx, input, input.id, ctx.scope.projectId, 1);
  if (!(await createInOneStatement(ctx, [version]))) {
    await writeBatch(ctx, [{ version, interaction: 'create' }]);
  }
  return toWriteResult(ctx, version, true) as WriteResult & { resource: T };
}

/**
 * Creates many new resources at once (transaction Bundles, imports, automation AuditEvents):
 * outside a transaction, one statement for the resources and their index rows; inside a caller's
 * transaction, one multi-row statement for the resources, one for the index rows. Resources must
 * already carry their final ids.
 */
export async function createMany(ctx: StorageContext, resources: Resource[]): Promise<WriteResult[]> {
  const inputs: Resource[] = [];
  const enforced = await enforcesProfiles(ctx);
  const versions = resources.map((r) => {
    assertStoredType(r.resourceType);
    if (!isValidId(r.id)) {
      fail(badRequest('Resource id is missing or invalid', `${r.resourceType}.id`));
    }
    const input = guardedInput(ctx.scope, r, undefined);
    validate(ctx, input, enforced);
    inputs.push(input);
    return buildVersion(ctx, input, r.id, ctx.scope.projectId, 1);
  });
  for (const input of inputs) {
    await checkDeclaredProfiles(ctx, input, enforced);
  }
  if (versions.length > 0 && !(await createInOneStatement(ctx, versions))) {
    await writeBatch(
      ctx,
      versions.map((version) => ({ version, interaction: 'create' as const })),
    );
  }
  return versions.map((v) => toWriteResult(ctx, v, true));
}

/**
 * Update (or create with a client-chosen id). The current row is locked (SELECT ... FOR UPDATE)
 * before the new version is built on it, so concurrent updates of one resource take turns and
 * every one lands, each on top of the one before (a gapless history); with If-Match, a stale
 * version is a 412. Only a create racing another create of the same new id is retried.
 */
export async function updateResource<T extends Resource>(
  ctx: StorageContext,
  resource: T,
  options: WriteOptions = {},
): Promise<WriteResult & { resource: T }> {
  assertStoredType(resource.resourceType);
  const id = resource.id;
  if (!isValidId(id)) {
    fail(badRequest('Resource id is missing or invalid', `${resource.resourceType}.id`));
  }
  await validateWrite(ctx, resource);
  const stale = (): never =>
    fail(preconditionFailed(`Version ${options.ifMatch} is not the current version of ${resource.resourceType}/${id}`));
  const inOne = await updateInOneStatement(ctx, resource, id, options, stale);
  if (inOne) {
    return inOne as WriteResult & { resource: T };
  }
  return inWriteTransaction(ctx, async (client, events) => {
    for (let attempt = 0; attempt < MAX_CREATE_RACES; attempt++) {
      const locked = await selectCurrentForUpdate(
        client,
        resource.resourceType,
        id,
        ctx.projects,
        writableBy(ctx.scope, resource.resourceType),
      );
      const current: CurrentRow | undefined = locked;
      if (options.ifMatch !== undefined && (!current || current.versionId !== options.ifMatch)) {
        stale();
      }
      if (locked && !locked.deleted && !locked.allowed) {
        // The version being replaced must itself be writable here (criteria, compartment, read-only project).
        fail(forbiddenWith(`Not allowed to modify ${resource.resourceType}/${id}`));
      }
      const input = guardedInput(ctx.scope, resource, current);
      const projectId = current?.projectId ?? ctx.scope.projectId;
      // Never earlier than the version it replaces, whatever the clock does.
      const lastUpdated = current ? laterThan(ctx, current.lastUpdated) : ctx.now();
      const version = buildVersion(ctx, input, id, projectId, (current?.versionId ?? 0) + 1, lastUpdated);
      if (current && !current.deleted) {
        version.replaces = current.content;
      }
      const item: WriteItem = {
        version,
        interaction: current && !current.deleted ? 'update' : 'create',
        previous: current,
      };
      if (await writeItems(ctx, client, [item], true)) {
        events.push(toEvent(item));
        return toWriteResult(ctx, version, !current || current.deleted) as WriteResult & { resource: T };
      }
      // Lost only when the id did not exist and another request created it meanwhile.
      if (options.ifMatch !== undefined) {
        stale();
      }
    }
    fail(conflict(`Too many concurrent writes of ${resource.resourceType}/${id}; try again`, 'lock-error'));
  });
}

export async function deleteResource(
  ctx: StorageContext,
  resourceType: string,
  id: string,
  options: WriteOptions = {},
): Promise<void> {
  assertStoredType(resourceType);
  const condition = visibleTo(ctx.scope, resourceType, 'delete');
  if (!isValidId(id)) {
    fail(notFoundWith(`${resourceType}/${id} not found`));
  }
  await inWriteTransaction(ctx, async (client, events) => {
    // Locked like an update, so a delete lands after (or before) concurrent updates, never beside them.
    const current = await selectCurrentForUpdate(client, resourceType, id, ctx.projects, condition);
    if (!current?.allowed) {
      fail(notFoundWith(`${resourceType}/${id} not found`));
    }
    if (options.ifMatch !== undefined && current.versionId !== options.ifMatch) {
      fail(preconditionFailed(`Version ${options.ifMatch} is not the current version of ${resourceType}/${id}`));
    }
    if (current.deleted) {
      return; // Deleting a deleted resource succeeds and writes nothing (R4 http.html#delete).
    }
    const version: StoredVersion = {
      resourceType,
      id,
      projectId: current.projectId,
      versionId: current.versionId + 1,
      lastUpdated: laterThan(ctx, current.lastUpdated),
      deleted: true,
      content: '',
      compartments: [],
    };
    const item: WriteItem = { version, interaction: 'delete', previous: current };
    // The row is locked: the write cannot lose a race.
    await writeItems(ctx, client, [item]);
    events.push(toEvent(item));
  });
}

/** Writes new resources (version 1) and their index rows in one transaction. */
async function writeBatch(ctx: StorageContext, items: WriteItem[]): Promise<void> {
  await inWriteTransaction(ctx, async (client, events) => {
    await writeItems(ctx, client, items);
    events.push(...items.map(toEvent));
  });
}

/**
 * Writes versions and their index rows inside the caller's transaction. A version whose
 * predecessor is not the stored one is not written: with tolerateRace (single items only) that
 * returns false with nothing written; otherwise it is a conflict.
 */
async function writeItems(
  ctx: StorageContext,
  client: PoolClient,
  items: WriteItem[],
  tolerateRace = false,
): Promise<boolean> {
  const versions = items.map((i) => i.version);
  let written: Set<string>;
  try {
    written = await writeVersions(client, versions);
  } catch (err) {
    if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) {
      throw new OperationOutcomeError(idsTaken(versions), err);
    }
    throw err;
  }
  const missing = versions.filter((v) => !written.has(versionKey(v.resourceType, v.projectId, v.id)));
  if (missing.length > 0) {
    const taken = await idHeldElsewhere(client, missing);
    if (taken) {
      fail(idTaken(taken.resourceType, taken.id));
    }
    if (tolerateRace && versions.length === 1) {
      return false;
    }
    fail(conflict(`${missing[0].resourceType}/${missing[0].id} was changed or created concurrently`));
  }
  await ctx.deps.indexer.index(client, versions);
  await verifyWritten(ctx.scope, client, versions);
  return true;
}
