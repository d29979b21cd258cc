import { OperationOutcomeError, type Resource } from '@hearth/core';
import { withTransaction, type PoolClient, type Queryable } from '../platform/postgres.js';
import * as conditional from './conditional.js';
import { prepareBulk, writeBulk, type BulkResult, type PreparedBulk } from './bulk-write.js';
import { assertStoredType, StorageContext } from './context.js';
import { readHistory } from './history.js';
import { readCurrentRow, readResource, readResources, readVersion } from './read.js';
import type { CurrentRow, HistoryQuery } from './sql/versions.js';
import type {
  AccessInteraction,
  ReadResult,
  RepositoryDeps,
  RepositoryScope,
  WriteOptions,
  WriteResult,
} from './types.js';
import { createMany, createResource, deleteResource, updateResource, validate } from './write.js';

/**
 * The FHIR datastore for one scope (a project and an actor): the one door the rest of the server
 * goes through. Each kind of work has its own module: read.ts and history.ts (reads), write.ts
 * (create, update, delete; write-one-statement.ts its fast paths), conditional.ts (conditional
 * interactions), access-guard.ts (access rules) and transaction.ts. Every write runs in one
 * transaction with its index rows; listeners (write-events.ts) hear of it after the commit.
 */
export class Repository {
  readonly scope: RepositoryScope;
  private readonly ctx: StorageContext;

  /** With `client`, the repository runs inside that caller's transaction (transaction Bundles). */
  constructor(deps: RepositoryDeps, scope: RepositoryScope, client?: PoolClient) {
    this.scope = scope;
    this.ctx = new StorageContext(deps, scope, client);
  }

  /** Where this repository's queries go: the transaction's client when bound to one, else the pool. */
  get queryable(): Queryable {
    return this.ctx.db;
  }

  /** Runs fn with a repository bound to one transaction; listeners hear of its writes only after COMMIT. */
  async withTransaction<T>(fn: (repo: Repository) => Promise<T>): Promise<T> {
    if (this.ctx.client) {
      return fn(this);
    }
    let tx: Repository | undefined;
    const result = await withTransaction(this.ctx.deps.pool, (client) => {
      tx = new Repository(this.ctx.deps, this.scope, client);
      return fn(tx);
    });
    this.ctx.emit(tx?.ctx.pending ?? []);
    return result;
  }

  /**
   * The server acting in this repository's own project, without the caller's access rules, in the
   * same transaction when bound to one: for the server-owned consequence of an operation the
   * caller was allowed to ask for (a booked Slot turning busy). Writes still name the caller as author.
   */
  asServer(): Repository {
    const { projectId, author } = this.scope;
    return new Repository(this.ctx.deps, { projectId, readProjects: [projectId], author }, this.ctx.client);
  }

  assertType(resourceType: string): void {
    assertStoredType(resourceType);
  }

  /** Validates a resource as a write would, throwing the 400 a write would throw. */
  check(resource: Resource): void {
    assertStoredType(resource.resourceType);
    validate(this.ctx, resource);
  }

  // ---- reads (read.ts, history.ts) ----

  readCurrentRow(resourceType: string, id: string, interaction: AccessInteraction = 'read'): Promise<CurrentRow> {
    return readCurrentRow(this.ctx, resourceType, id, interaction);
  }

  readResource<T extends Resource = Resource>(resourceType: string, id: string): Promise<ReadResult & { resource: T }> {
    return readResource(this.ctx, resourceType, id) as Promise<ReadResult & { resource: T }>;
  }

  /** Reads many resources of one type; missing and deleted ones are left out. */
  readResources(resourceType: string, ids: string[], interaction: AccessInteraction = 'read'): Promise<ReadResult[]> {
    return readResources(this.ctx, resourceType, ids, interaction);
  }

  readVersion(resourceType: string, id: string, versionId: string): Promise<ReadResult> {
    return readVersion(this.ctx, resourceType, id, versionId);
  }

  /** Versions newest first, one page; deleted versions come with an empty content. */
  readHistory(query: Omit<HistoryQuery, 'projects'>): Promise<{ rows: CurrentRow[]; hasMore: boolean }> {
    return readHistory(this.ctx, query);
  }

  // ---- writes (write.ts) ----

  /** Creates a resource with a new server-assigned id. */
  createResource<T extends Resource>(resource: T): Promise<WriteResult & { resource: T }> {
    return createResource(this.ctx, resource);
  }

  /** Creates many new resources, which already carry their final ids, in as few statements as possible. */
  createMany(resources: Resource[]): Promise<WriteResult[]> {
    return createMany(this.ctx, resources);
  }

  /**
   * Bulk writes ($import), in two steps so that a caller can check the next batch while the last
   * one is written: prepareBulk checks and builds each resource as a create would (CPU only),
   * writeBulk writes the batch (ids kept: new ones created, stored ones updated) and answers per resource.
   */
  prepareBulk(resources: Resource[]): Promise<PreparedBulk> {
    return prepareBulk(this.ctx, resources);
  }

  writeBulk(prepared: PreparedBulk): Promise<BulkResult[]> {
    return writeBulk(this.ctx, prepared);
  }

  /**
   * Update, or create with a client-chosen id; with If-Match, a stale version is a 412. The update
   * rules that apply (types.ts: UpdateRule) run after it in its transaction.
   */
  updateResource<T extends Resource>(resource: T, options: WriteOptions = {}): Promise<WriteResult & { resource: T }> {
    const rules = (this.ctx.deps.updateRules ?? []).filter(
      (r) => r.resourceType === resource.resourceType && r.applies(resource),
    );
    if (rules.length === 0) {
      return updateResource(this.ctx, resource, options);
    }
    return this.withTransaction(async (tx) => {
      const written = await updateResource(tx.ctx, resource, options);
      const previous = written.created ? undefined : await tx.versionBefore(resource.resourceType, written);
      for (const rule of rules) {
        await rule.afterUpdate(tx, written.resource, previous);
      }
      return written;
    });
  }

  /**
   * The version an update replaced (history is gapless: the one numbered just before), as the
   * server sees it: for a rule to compare, never shown to the caller. Undefined after a deletion.
   */
  private async versionBefore(resourceType: string, written: WriteResult): Promise<Resource | undefined> {
    const id = written.resource.id as string;
    try {
      return (await this.asServer().readVersion(resourceType, id, String(written.versionId - 1))).resource;
    } catch (e) {
      if (e instanceof OperationOutcomeError && (e.status === 404 || e.status === 410)) return undefined;
      throw e;
    }
  }

  deleteResource(resourceType: string, id: string, options: WriteOptions = {}): Promise<void> {
    return deleteResource(this.ctx, resourceType, id, options);
  }

  // ---- conditional interactions (conditional.ts); async, so that an unknown type rejects ----

  /** Conditional create (If-None-Exist): creates unless exactly one match exists; 412 on several. */
  async createResourceIfNoneExist<T extends Resource>(
    resource: T,
    query: string,
  ): Promise<WriteResult & { resource: T }> {
    assertStoredType(resource.resourceType);
    return conditional.createIfNoneExist(this, resource, query);
  }

  /** Conditional update: PUT Type?query. */
  async conditionalUpdate<T extends Resource>(resource: T, query: string): Promise<WriteResult & { resource: T }> {
    assertStoredType(resource.resourceType);
    return conditional.conditionalUpdate(this, resource, query);
  }

  /** Conditional delete: deletes every match, up to `max` (more: 412). Returns how many were deleted. */
  async conditionalDelete(resourceType: string, query: string, max: number): Promise<number> {
    assertStoredType(resourceType);
    return conditional.conditionalDelete(this, resourceType, query, max);
  }

  /** Ids of up to `limit` resources matching a condition; inside a transaction, under its lock. */
  async findMatches(resourceType: string, query: string, limit: number): Promise<string[]> {
    assertStoredType(resourceType);
    return conditional.findMatches(this.ctx, resourceType, query, limit);
  }

  /** The id of the single resource matching a condition (conditional patch): 404 none, 412 several. */
  async resolveCondition(resourceType: string, query: string): Promise<string> {
    assertStoredType(resourceType);
    return conditional.singleMatch(this.ctx, resourceType, query);
  }
}
