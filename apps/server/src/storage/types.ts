import type { OperationOutcomeIssue, Reference, Resource, ValidationChecks } from '@hearth/core';
import type { Pool, PoolClient, Queryable } from '../platform/postgres.js';

/** What a repository is built from (services.ts builds it once; a repository per request shares it). */
export interface RepositoryDeps {
  pool: Pool;
  validator: ResourceValidator;
  indexer: SearchIndexer;
  matcher: ConditionalMatcher;
  /** Told of every committed write (a WriteEvents, write-events.ts); none: nobody listens. */
  events?: { notify(events: WriteEvent[]): void };
  clock?: () => Date;
  /** Checks the profiles a resource declares when its project enforces them (resources/profiles.ts). */
  profiles?: DeclaredProfileCheck;
  /** Consequences of updates that commit with them, from domain modules (services.ts). */
  updateRules?: readonly UpdateRule[];
}

/**
 * The Repository (storage/repository.ts) an update rule is given, bound to the update's
 * transaction. Named here by one member only because that file imports this one: a rule declares
 * its parameter as `Repository`, which method parameters allow.
 */
export interface RuleRepository {
  readonly scope: RepositoryScope;
}

/**
 * A consequence of an update that must commit with it (scheduling: an Appointment written as
 * cancelled frees its Slots), whichever way the update came: PUT, PATCH, a Bundle entry, GraphQL,
 * a bot, an operation. Storage knows no domain; it runs the rules that apply, in the update's
 * transaction, after the new version is written. A throw rolls the update back.
 */
export interface UpdateRule {
  readonly resourceType: string;
  /**
   * Whether updating to `resource` may have a consequence, decided from the new content alone so
   * that updates without one keep their one-statement path.
   */
  applies(resource: Resource): boolean;
  /** Runs after the update; `previous` is the version it replaced (undefined when the update created). */
  afterUpdate(repo: RuleRepository, written: Resource, previous: Resource | undefined): Promise<void>;
}

/** A read of one version: the stored JSON text is kept so it can be served without re-serialising. */
export interface ReadResult {
  resource: Resource;
  content: string;
  versionId: number;
  lastUpdated: Date;
}

export interface WriteResult extends ReadResult {
  /** True when a new resource was created (201), false when an existing one was updated or returned. */
  created: boolean;
}

export interface WriteOptions {
  /** The version the client last saw (If-Match); anything else is a 412. */
  ifMatch?: number;
}

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
  /**
   * The stored JSON of the version this one replaces, when the writer read it: the indexer then
   * rewrites only the kinds of index rows that changed (an update of one field rewrites one table).
   */
  replaces?: string;
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
  /**
   * The data-modifying CTEs that write the index rows of brand-new resources, values bound
   * through `param` (which returns the placeholder), so that their create is one statement;
   * undefined when a write needs more than rows (a SearchParameter reloads and reindexes its project).
   */
  newResourceParts?(
    db: Queryable,
    versions: StoredVersion[],
    param: (value: unknown, cast: string) => string,
  ): Promise<string[] | undefined>;
  /**
   * The same for a new version of an existing resource (its `replaces` set): the parts replace the
   * rows that changed, and write only where `guard` (a SQL condition) holds, so that a statement
   * whose update of the resource row found nothing to update writes no index rows either.
   */
  replacedResourceParts?(
    db: Queryable,
    version: StoredVersion,
    param: (value: unknown, cast: string) => string,
    guard: string,
  ): Promise<string[] | undefined>;
  /**
   * Bulk writes ($import): writes every index row of `versions` with COPY in the caller's
   * transaction, after deleting the stored rows of those that replace an earlier version
   * (versionId > 1). Returns false, having written nothing, when a version needs more than rows
   * (a SearchParameter reindexes its project, terminology resources fill their own tables, watched
   * types announce their writes): the caller then takes the ordinary write path.
   */
  copyRows?(client: PoolClient, versions: StoredVersion[]): Promise<boolean>;
}

/** Finds the ids of resources matching a FHIR search query string, for conditional interactions. */
export interface ConditionalMatcher {
  /**
   * Returns at most `limit` ids of `resourceType` in the project that match `query` (a FHIR search
   * query string without the leading '?'). Throws an OperationOutcomeError for a malformed query.
   */
  findIds(db: Queryable, scope: RepositoryScope, resourceType: string, query: string, limit: number): Promise<string[]>;
}

/** The `meta.profile`s of a write, checked when the project's setting `enforceProfiles` is on. */
export interface DeclaredProfileCheck {
  /** Whether the project's setting `enforceProfiles` is on (read once and held, like the profiles). */
  enforces(projectId: string): Promise<boolean>;
  /** The issues against the declared profiles; none when there are none or the project does not enforce them. */
  check(resource: Resource, projectId: string): Promise<OperationOutcomeIssue[]>;
}

/**
 * Checks a resource against its definition; returns the problems found (empty when valid). Writes
 * check the base definitions; `$validate`, and writes in a project that enforces profiles, ask for
 * `requiredProfiles` too (the vital signs profiles R4 applies by code: resources/definitions.ts).
 */
export interface ResourceValidator {
  validate(resource: Resource, checks?: ValidationChecks): OperationOutcomeIssue[];
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
  /** Row- and field-level access rules (access policies, SMART scopes); undefined: the projects alone decide. */
  access?: AccessGuard;
}

/** The FHIR interactions an access policy or SMART scope grants (AccessPolicy.resource.interaction). */
export type AccessInteraction = 'create' | 'read' | 'vread' | 'update' | 'delete' | 'search' | 'history';

/** Binds a value as a query parameter and returns its placeholder ("$3"). */
export type SqlParam = (value: unknown) => string;

/**
 * Access rules enforced in SQL, built by auth/access for one request. Row conditions are
 * written over the columns of a current-version row (`resource` or a type partition) under the
 * given alias: resource_type, id, project_id, content, compartments. Storage and search AND them
 * into every query that returns or touches rows, so a row outside the policy is never read.
 */
export interface AccessGuard {
  /** Throws 403 when the interaction is not allowed on the type at all (before any query). */
  assertInteraction(resourceType: string, interaction: AccessInteraction): void;
  /**
   * The condition a row must meet to be visible to `interaction`; `resourceType` undefined means
   * rows of any type (system history, _type searches). 'FALSE' when none may be seen, undefined when all.
   */
  readCondition(
    resourceType: string | undefined,
    interaction: AccessInteraction,
    alias: string,
    param: SqlParam,
  ): string | undefined;
  /** The condition a row must meet to be written (before and after the write); 'FALSE' for read-only types. */
  writeCondition(resourceType: string, alias: string, param: SqlParam): string | undefined;
  /**
   * Whether a row written in `projectId` must be read back against writeCondition before COMMIT:
   * false when every rule only pins writes to projects (and this is one of them), so the row as
   * built meets the condition; true when some rule looks at the row (criteria, compartments).
   */
  writeCheckNeeded(resourceType: string, projectId: string): boolean;
  /** The resource to store: server-owned, read-only and hidden fields kept from `previous`. Throws 403. */
  prepareWrite(resource: Resource, previous: Resource | undefined): Resource;
  /** True when resources of the type are served with some fields hidden. */
  hidesFields(resourceType: string): boolean;
  /** The resource as this scope may see it (hidden fields removed). */
  redact(resource: Resource): Resource;
}

/** A committed write, reported to listeners after the commit (subscriptions, caches). */
export interface WriteEvent {
  interaction: 'create' | 'update' | 'delete';
  version: StoredVersion;
  previous?: StoredVersion;
}

export type WriteListener = (events: WriteEvent[]) => void;
