import { fail, notFoundWith } from '@hearth/core';
import type { PoolClient, Queryable } from '../platform/postgres.js';
import { isStoredResourceType } from './tables.js';
import type { RepositoryDeps, RepositoryScope, WriteEvent } from './types.js';

/**
 * What every step of a repository works with: its dependencies, who acts (the scope), and where
 * statements go: the pool, or a caller's transaction, whose writes are told only after its COMMIT.
 */
export class StorageContext {
  /** Writes made inside a caller's transaction, told once that transaction commits. */
  readonly pending: WriteEvent[] = [];

  constructor(
    readonly deps: RepositoryDeps,
    readonly scope: RepositoryScope,
    /** Set when bound to a caller's transaction (transaction Bundles). */
    readonly client?: PoolClient,
  ) {}

  get db(): Queryable {
    return this.client ?? this.deps.pool;
  }

  /** Projects readable in this scope; undefined means all. */
  get projects(): string[] | undefined {
    return this.scope.readProjects;
  }

  now(): Date {
    return this.deps.clock ? this.deps.clock() : new Date();
  }

  /** Tells listeners of committed writes; inside a caller's transaction, keeps them for its COMMIT. */
  emit(events: WriteEvent[]): void {
    if (events.length === 0) {
      return;
    }
    if (this.client) {
      this.pending.push(...events);
      return;
    }
    this.deps.events?.notify(events);
  }
}

/** Only types with a table reach SQL; anything else is a 404, as for an unknown URL. */
export function assertStoredType(resourceType: string): void {
  if (!isStoredResourceType(resourceType)) {
    fail(notFoundWith(`Unknown resource type "${resourceType}"`));
  }
}
