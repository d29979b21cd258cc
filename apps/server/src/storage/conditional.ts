// Conditional interactions: a search picks the resource a write lands on (hl7.org/fhir/R4/http.html
// #ccreate, #cond-update, #cdelete, and conditional patch). What happens depends on how many
// resources the condition matches: none, one or several. A condition that may lead to a write is
// resolved under an advisory lock held until COMMIT, so two identical conditional writes take turns
// and cannot both create. The REST interactions and Bundles (fhir/bundle/) both come here.
import { badRequest, fail, notFoundWith, preconditionFailed, type Resource } from '@hearth/core';
import type { StorageContext } from './context.js';
import type { ReadResult, WriteResult } from './types.js';

/** Serialises the transactions that resolve one condition (its parameters in any order). */
async function lockCondition(ctx: StorageContext, resourceType: string, query: string): Promise<void> {
  const normalized = query.split('&').filter(Boolean).sort().join('&');
  await ctx.db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `${ctx.scope.projectId}|${resourceType}|${normalized}`,
  ]);
}

/**
 * Ids of up to `limit` resources matching a condition (a search query string without '?'; its
 * parameters are checked as a search's are). Inside a transaction the condition stays locked until
 * the commit, so transactions resolving the same condition take turns.
 */
export async function findMatches(
  ctx: StorageContext,
  resourceType: string,
  query: string,
  limit: number,
): Promise<string[]> {
  if (ctx.client) {
    await lockCondition(ctx, resourceType, query);
  }
  return ctx.deps.matcher.findIds(ctx.db, ctx.scope, resourceType, query, limit);
}

/**
 * The one resource a condition names where it only picks an existing resource (conditional patch,
 * a transaction's conditional references): none is a 404, several a 412. Not locked: the write
 * that follows locks the resource's row itself.
 */
export async function singleMatch(ctx: StorageContext, resourceType: string, query: string): Promise<string> {
  const ids = await ctx.deps.matcher.findIds(ctx.db, ctx.scope, resourceType, query, 2);
  if (ids.length === 0) {
    fail(notFoundWith(`No ${resourceType} matches ${query}`));
  }
  if (ids.length > 1) {
    fail(preconditionFailed(`The condition matched ${ids.length} or more ${resourceType} resources`));
  }
  return ids[0];
}

/** What conditional writes need of a repository (storage/repository.ts); `this` is one bound to a transaction. */
export interface ConditionalStore {
  withTransaction<T>(fn: (tx: this) => Promise<T>): Promise<T>;
  /** findMatches above, on this repository's scope and transaction. */
  findMatches(resourceType: string, query: string, limit: number): Promise<string[]>;
  readResource<T extends Resource = Resource>(resourceType: string, id: string): Promise<ReadResult & { resource: T }>;
  createResource<T extends Resource>(resource: T): Promise<WriteResult & { resource: T }>;
  updateResource<T extends Resource>(resource: T): Promise<WriteResult & { resource: T }>;
  deleteResource(resourceType: string, id: string): Promise<void>;
}

/**
 * If-None-Exist: the id of the one match, which answers the create; undefined when none matches
 * (the resource is created); several are a 412. `name` is the condition as the client wrote it
 * (the If-None-Exist header, a Bundle entry's ifNoneExist).
 */
export async function existingMatch(
  tx: Pick<ConditionalStore, 'findMatches'>,
  resourceType: string,
  query: string,
  name: string,
): Promise<string | undefined> {
  const ids = await tx.findMatches(resourceType, query, 2);
  if (ids.length > 1) {
    fail(preconditionFailed(`${name} matched ${ids.length} or more ${resourceType} resources`));
  }
  return ids[0];
}

/**
 * Conditional update: the id the resource is written with. One match: its id (a body that names
 * another id is a 400); none: the body's own id, or undefined for a new one; several: a 412.
 */
export async function updateTarget(
  tx: Pick<ConditionalStore, 'findMatches'>,
  resourceType: string,
  query: string,
  bodyId: string | undefined,
): Promise<string | undefined> {
  const ids = await tx.findMatches(resourceType, query, 2);
  if (ids.length > 1) {
    fail(preconditionFailed(`Conditional update matched ${ids.length} or more ${resourceType} resources`));
  }
  if (ids.length === 1) {
    if (bodyId && bodyId !== ids[0]) {
      fail(badRequest(`Resource id ${bodyId} does not match the resource found (${ids[0]})`, `${resourceType}.id`));
    }
    return ids[0];
  }
  return bodyId || undefined;
}

/** POST with If-None-Exist: the one match as it is (200), or the resource created (201). */
export async function createIfNoneExist<T extends Resource>(
  repo: ConditionalStore,
  resource: T,
  query: string,
): Promise<WriteResult & { resource: T }> {
  const type = resource.resourceType;
  return repo.withTransaction(async (tx) => {
    const existing = await existingMatch(tx, type, query, 'If-None-Exist');
    if (existing !== undefined) {
      return { ...(await tx.readResource<T>(type, existing)), created: false };
    }
    return tx.createResource(resource);
  });
}

/** PUT [type]?[search]: updates the one match, or creates the resource when none matches. */
export async function conditionalUpdate<T extends Resource>(
  repo: ConditionalStore,
  resource: T,
  query: string,
): Promise<WriteResult & { resource: T }> {
  return repo.withTransaction(async (tx) => {
    const id = await updateTarget(tx, resource.resourceType, query, resource.id);
    return id === undefined ? tx.createResource(resource) : tx.updateResource({ ...resource, id });
  });
}

/** DELETE [type]?[search]: deletes every match, up to `max` (more: 412). Returns how many were deleted. */
export async function conditionalDelete(
  repo: ConditionalStore,
  resourceType: string,
  query: string,
  max: number,
): Promise<number> {
  return repo.withTransaction(async (tx) => {
    const ids = await tx.findMatches(resourceType, query, max + 1);
    if (ids.length > max) {
      fail(preconditionFailed(`Conditional delete matched more than ${max} ${resourceType} resources`));
    }
    for (const id of ids) {
      await tx.deleteResource(resourceType, id);
    }
    return ids.length;
  });
}
