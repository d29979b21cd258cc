import type { OperationOutcomeIssue, Reference, Resource } from '@hearth/core';
import type { PoolClient, Queryable } from '../platform/postgres.js';

/** One stored version of one resource, as written to the current and history tables. */
export interface StoredVersion {
  resourceType: string;
  id: string;
  projectId: string;
  versionId: number;
  lastUpdated: Date;
  deleted: boolean;
  /** The resource with its meta, parsed. Undefined for a deletion. */
  resource?: Resource;
  /** The serialised resource exactly as served; '' for a deletion. */
  content: string;
  /** Ids ("Patient/123") of the compartments the resource belongs to. */
  compartments: string[];
}

/**
 * Writes search index rows for a batch of versions, inside the write's transaction.
 * Implemented by the search module; storage knows nothing of search parameters.
 */
export interface SearchIndexer {
  /** Replaces the index rows of every resource in the batch (deleted versions: removes them). */
  index(client: PoolClient, versions: StoredVersion[]): Promise<void>;
  /** The compartments ("Patient/123") a resource belongs to, stored with it. */
  compartmentsOf(resource: Resource): string[];
}

/** Finds the ids of resources matching a FHIR search query string, for conditional interactions. */
export interface ConditionalMatcher {
  /**
   * Returns at most `limit` ids of `resourceType` in the project that match `query` (a FHIR search
   * query string without the leading '?'). Throws an OperationOutcomeError for a malformed query.
   */
  findIds(db: Queryable, scope: RepositoryScope, resourceType: string, query: string, limit: number): Promise<string[]>;
}

/** Checks a resource against its definition; returns the problems found (empty when valid). */
export interface ResourceValidator {
  validate(resource: Resource): OperationOutcomeIssue[];
}

/** Who is acting and on which data. */
export interface RepositoryScope {
  /** The project new resources are written to. */
  projectId: string;
  /** Projects whose resources can be read (the own project first). Undefined: every project (super admin, system). */
  readProjects?: string[];
  /** The author recorded in meta.author. */
  author?: Reference;
  /** System operations skip validation of server-owned fields (e.g. creating Users during sign-up). */
  system?: boolean;
}

/** A committed write, reported to listeners after the commit (subscriptions, caches). */
export interface WriteEvent {
  interaction: 'create' | 'update' | 'delete';
  version: StoredVersion;
  previous?: StoredVersion;
}

export type WriteListener = (events: WriteEvent[]) => void;
