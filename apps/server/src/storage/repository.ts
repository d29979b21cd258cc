import {
  badRequest,
  conflict,
  fail,
  forbiddenWith,
  generateId,
  goneWith,
  isValidId,
  notFoundWith,
  OperationOutcomeError,
  preconditionFailed,
  validationError,
  type OperationOutcome,
  type Resource,
} from '@hearth/core';
import {
  pgErrorCode,
  preparedName,
  PG_UNIQUE_VIOLATION,
  type Pool,
  type PoolClient,
  type Queryable,
} from '../platform/postgres.js';
import { buildStoredVersion, parseStored } from './serialize.js';
import {
  selectCurrent,
  selectCurrentForUpdate,
  selectCurrentToWrite,
  replaceVersionParts,
  selectCurrentMany,
  selectHistory,
  idHeldElsewhere,
  selectVersion,
  newVersionParts,
  versionKey,
  writeVersions,
  type CurrentRow,
  type HistoryQuery,
  type RowCondition,
} from './sql/versions.js';
import { newVersionsParts } from './sql/new-versions.js';
import { isStoredResourceType } from './tables.js';
import type {
  AccessInteraction,
  ConditionalMatcher,
  RepositoryScope,
  ResourceValidator,
  SearchIndexer,
  StoredVersion,
  WriteEvent,
  WriteListener,
} from './types.js';

export interface RepositoryDeps {
  pool: Pool;
  validator: ResourceValidator;
  indexer: SearchIndexer;
  matcher: ConditionalMatcher;
  listeners?: WriteListener[];
  clock?: () => Date;
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

/**
 * Updates lock the current row, so only a create through PUT can lose a race (to another create
 * of the same new id), and the retry then finds and locks the row: two attempts suffice; three is margin.
 */
const MAX_CREATE_RACES = 3;

interface WriteItem {
  version: StoredVersion;
  interaction: WriteEvent['interaction'];
  previous?: CurrentRow;
}

/**
 * The FHIR datastore for one scope (a project and an actor). Thin orchestration over sql/:
 * validation, meta assignment, versioning, index writes and conditional logic.
 * Every write runs in one transaction with its index rows; listeners hear of it after the commit.
 */
export class Repository {
  private readonly deps: RepositoryDeps;
  readonly scope: RepositoryScope;
  /** Set when this repository runs inside a caller's transaction (transaction Bundles). */
  private readonly client?: PoolClient;
  private readonly pendingEvents: WriteEvent[] = [];

  constructor(deps: RepositoryDeps, scope: RepositoryScope, client?: PoolClient) {
    this.deps = deps;
    this.scope = scope;
    this.client = client;
  }

  private get db(): Queryable {
    return this.client ?? this.deps.pool;
  }

  /** Where this repository's queries go: the transaction's client when bound to one, else the pool. */
  get queryable(): Queryable {
    return this.db;
  }

  private now(): Date {
    return this.deps.clock ? this.deps.clock() : new Date();
  }

  /** Projects readable in this scope; undefined means all. */
  private get projects(): string[] | undefined {
    return this.scope.readProjects;
  }

  // ---- access rules (scope.access, built by auth/access): enforced in the SQL of every read ----

  /** Asserts the interaction and returns the row condition of the scope's access guard, if any. */
  private visibleTo(resourceType: string, interaction: AccessInteraction): RowCondition | undefined {
    const guard = this.scope.access;
    if (!guard) {
      return undefined;
    }
    guard.assertInteraction(resourceType, interaction);
    return (alias, param) => guard.readCondition(resourceType, interaction, alias, param);
  }

  private writableBy(resourceType: string): RowCondition | undefined {
    const guard = this.scope.access;
    return guard ? (alias, param) => guard.writeCondition(resourceType, alias, param) : undefined;
  }

  /** A read result as the scope may see it (hidden fields removed). */
  private shown<T extends ReadResult>(result: T, resourceType: string): T {
    const guard = this.scope.access;
    if (!guard?.hidesFields(resourceType)) {
      return result;
    }
    const resource = guard.redact(result.resource);
    return { ...result, resource, content: JSON.stringify(resource) };
  }

  /** Runs fn with a repository bound to one transaction; listeners hear of its writes only after COMMIT. */
  async withTransaction<T>(fn: (repo: Repository) => Promise<T>): Promise<T> {
    if (this.client) {
      return fn(this);
    }
    const client = await this.deps.pool.connect();
    const txRepo = new Repository(this.deps, this.scope, client);
    try {
      await client.query('BEGIN');
      const result = await fn(txRepo);
      await client.query('COMMIT');
      this.emit(txRepo.pendingEvents);
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private emit(events: WriteEvent[]): void {
    if (events.length === 0) {
      return;
    }
    if (this.client) {
      this.pendingEvents.push(...events);
      return;
    }
    for (const listener of this.deps.listeners ?? []) {
      try {
        listener(events);
      } catch {
        // A listener's failure must never undo or fail a committed write.
      }
    }
  }

  assertType(resourceType: string): void {
    if (!isStoredResourceType(resourceType)) {
      fail(notFoundWith(`Unknown resource type "${resourceType}"`));
    }
  }

  private validate(resource: Resource): void {
    const issues = this.deps.validator.validate(resource);
    const errors = issues.filter((i) => i.severity === 'error' || i.severity === 'fatal');
    if (errors.length > 0) {
      fail(validationError(issues));
    }
  }

  /** Validates a resource as a write would, throwing the 400 a write would throw. */
  check(resource: Resource): void {
    this.assertType(resource.resourceType);
    this.validate(resource);
  }

  // ---- reads ----

  async readCurrentRow(resourceType: string, id: string, interaction: AccessInteraction = 'read'): Promise<CurrentRow> {
    this.assertType(resourceType);
    const condition = this.visibleTo(resourceType, interaction);
    if (!isValidId(id)) {
      fail(notFoundWith(`${resourceType}/${id} not found`));
    }
    const row = await selectCurrent(this.db, resourceType, id, this.projects, false, condition);
    if (!row) {
      fail(notFoundWith(`${resourceType}/${id} not found`));
    }
    return row;
  }

  async readResource<T extends Resource = Resource>(
    resourceType: string,
    id: string,
  ): Promise<ReadResult & { resource: T }> {
    const row = await this.readCurrentRow(resourceType, id);
    if (row.deleted) {
      fail(goneWith(`${resourceType}/${id} was deleted`));
    }
    return this.shown(readResultOf(row), resourceType) as ReadResult & { resource: T };
  }

  /** Reads many resources of one type; missing and deleted ones are left out. */
  async readResources(
    resourceType: string,
    ids: string[],
    interaction: AccessInteraction = 'read',
  ): Promise<ReadResult[]> {
    this.assertType(resourceType);
    const condition = this.visibleTo(resourceType, interaction);
    const rows = await selectCurrentMany(this.db, resourceType, ids.filter(isValidId), this.projects, condition);
    return rows.filter((r) => !r.deleted).map((r) => this.shown(readResultOf(r), resourceType));
  }

  async readVersion(resourceType: string, id: string, versionId: string): Promise<ReadResult> {
    this.assertType(resourceType);
    const vid = Number(versionId);
    if (!isValidId(id) || !Number.isInteger(vid) || vid < 1 || vid > 2 ** 31 - 1) {
      fail(notFoundWith(`${resourceType}/${id}/_history/${versionId} not found`));
    }
    const condition = this.visibleTo(resourceType, 'vread');
    const row = await selectVersion(this.db, resourceType, id, vid, this.projects, condition);
    if (!row) {
      fail(notFoundWith(`${resourceType}/${id}/_history/${versionId} not found`));
    }
    if (row.deleted) {
      fail(goneWith(`${resourceType}/${id}/_history/${versionId} is a deletion`));
    }
    return this.shown(readResultOf(row), resourceType);
  }

  /** Versions newest first, one page; deleted versions come with an empty content. */
  async readHistory(query: Omit<HistoryQuery, 'projects'>): Promise<{ rows: CurrentRow[]; hasMore: boolean }> {
    if (query.resourceType) {
      this.assertType(query.resourceType);
    }
    const guard = this.scope.access;
    if (guard && query.resourceType) {
      guard.assertInteraction(query.resourceType, 'history');
    }
    const condition: RowCondition | undefined = guard
      ? (alias, param) => guard.readCondition(query.resourceType, 'history', alias, param)
      : undefined;
    let rows = await selectHistory(this.db, { ...query, projects: this.projects, condition });
    if (rows.length === 0 && query.resourceType && query.id) {
      // 404 for an id that never existed here (checked only when the page is empty).
      await this.readCurrentRow(query.resourceType, query.id, 'history');
    }
    if (guard) {
      rows = rows.map((r) =>
        r.deleted || !guard.hidesFields(r.resourceType)
          ? r
          : { ...r, content: JSON.stringify(guard.redact(parseStored(r.content))) },
      );
    }
    const hasMore = rows.length > query.count;
    return { rows: hasMore ? rows.slice(0, query.count) : rows, hasMore };
  }

  // ---- writes ----

  /** Creates a resource with a new server-assigned id. */
  async createResource<T extends Resource>(resource: T): Promise<WriteResult & { resource: T }> {
    this.assertType(resource.resourceType);
    const input = this.guardedInput({ ...resource, id: generateId() }, undefined);
    this.validate(input);
    const version = this.buildVersion(input, input.id, this.scope.projectId, 1);
    if (!(await this.createInOneStatement([version]))) {
      await this.writeBatch([{ version, interaction: 'create' }]);
    }
    return this.toWriteResult(version, true) as WriteResult & { resource: T };
  }

  /**
   * Writes new resources' current rows, history rows and index rows in ONE statement, outside any
   * transaction (a single statement is atomic): one round trip instead of BEGIN, two writes and
   * COMMIT. Returns false, having written nothing, where that does not apply: inside a caller's
   * transaction, when an access policy's write condition must check the written rows before COMMIT,
   * or when the indexer needs more than rows (a SearchParameter reindexes its project).
   */
  private async createInOneStatement(versions: StoredVersion[]): Promise<boolean> {
    const indexer = this.deps.indexer;
    if (
      this.client ||
      !indexer.newResourceParts ||
      versions.some((v) => this.needsWriteCheck(v.resourceType, v.projectId))
    ) {
      return false;
    }
    const values: unknown[] = [];
    const param = (value: unknown, cast: string): string => {
      values.push(value);
      return `$${values.length}::${cast}`;
    };
    // One resource (every single create): scalar values, the statement its plans were measured with.
    const versionParts =
      versions.length === 1 ? newVersionParts(versions[0], param) : newVersionsParts(versions, param);
    const indexParts = await indexer.newResourceParts(this.deps.pool, versions, param);
    if (!indexParts) {
      return false;
    }
    const text = `WITH ${[...versionParts, ...indexParts].join(',\n')} SELECT 1`;
    try {
      await this.deps.pool.query({ name: preparedName('hearth_create', text), text, values });
    } catch (err) {
      if (pgErrorCode(err) === PG_UNIQUE_VIOLATION) {
        throw new OperationOutcomeError(idsTaken(versions), err);
      }
      throw err;
    }
    this.emit(versions.map((version) => toEvent({ version, interaction: 'create' })));
    return true;
  }

  /** Conditional create (If-None-Exist): creates unless exactly one match exists; 412 on several. */
  async createResourceIfNoneExist<T extends Resource>(
    resource: T,
    query: string,
  ): Promise<WriteResult & { resource: T }> {
    this.assertType(resource.resourceType);
    return this.withTransaction(async (repo) => {
      await repo.lockCondition(resource.resourceType, query);
      const ids = await repo.deps.matcher.findIds(repo.db, repo.scope, resource.resourceType, query, 2);
      if (ids.length > 1) {
        fail(preconditionFailed(`If-None-Exist matched ${ids.length} or more ${resource.resourceType} resources`));
      }
      if (ids.length === 1) {
        const existing = await repo.readResource<T>(resource.resourceType, ids[0]);
        return { ...existing, created: false };
      }
      return repo.createResource(resource);
    });
  }

  /**
   * Update (or create with a client-chosen id). The current row is locked (SELECT ... FOR UPDATE)
   * before the new version is built on it, so concurrent updates of one resource take turns and
   * every one lands, each on top of the one before (a gapless history); with If-Match, a stale
   * version is a 412. Only a create racing another create of the same new id is retried.
   */
  async updateResource<T extends Resource>(
    resource: T,
    options: WriteOptions = {},
  ): Promise<WriteResult & { resource: T }> {
    this.assertType(resource.resourceType);
    const id = resource.id;
    if (!isValidId(id)) {
      fail(badRequest('Resource id is missing or invalid', `${resource.resourceType}.id`));
    }
    this.validate(resource);
    const stale = (): never =>
      fail(
        preconditionFailed(`Version ${options.ifMatch} is not the current version of ${resource.resourceType}/${id}`),
      );
    const inOne = await this.updateInOneStatement(resource, id, options, stale);
    if (inOne) {
      return inOne as WriteResult & { resource: T };
    }
    return this.inWriteTransaction(async (client, events) => {
      for (let attempt = 0; attempt < MAX_CREATE_RACES; attempt++) {
        const locked = await selectCurrentForUpdate(
          client,
          resource.resourceType,
          id,
          this.projects,
          this.writableBy(resource.resourceType),
        );
        const current: CurrentRow | undefined = locked;
        if (options.ifMatch !== undefined && (!current || current.versionId !== options.ifMatch)) {
          stale();
        }
        if (locked && !locked.deleted && !locked.allowed) {
          // The version being replaced must itself be writable here (criteria, compartment, read-only project).
          fail(forbiddenWith(`Not allowed to modify ${resource.resourceType}/${id}`));
        }
        const input = this.guardedInput(resource, current);
        const projectId = current?.projectId ?? this.scope.projectId;
        // Never earlier than the version it replaces, whatever the clock does.
        const lastUpdated = current ? this.laterThan(current.lastUpdated) : this.now();
        const version = this.buildVersion(input, id, projectId, (current?.versionId ?? 0) + 1, lastUpdated);
        if (current && !current.deleted) {
          version.replaces = current.content;
        }
        const item: WriteItem = {
          version,
          interaction: current && !current.deleted ? 'update' : 'create',
          previous: current,
        };
        if (await this.writeItems(client, [item], true)) {
          events.push(toEvent(item));
          return this.toWriteResult(version, !current || current.deleted) as WriteResult & { resource: T };
        }
        // Lost only when the id did not exist and another request created it meanwhile.
        if (options.ifMatch !== undefined) {
          stale();
        }
      }
      fail(conflict(`Too many concurrent writes of ${resource.resourceType}/${id}; try again`, 'lock-error'));
    });
  }

  /**
   * An update of an existing resource as one read and ONE autocommit statement (current row, history
   * row and changed index rows), instead of BEGIN, a locking read, two writes and COMMIT. The write
   * applies only if the row is still the one read; when it is not (a concurrent write won), or
   * where this does not apply (inside a caller's transaction, a deleted or missing resource, a write
   * condition to check in the database, a SearchParameter or terminology resource), it returns
   * undefined having written nothing, and the locking path runs.
   */
  private async updateInOneStatement(
    resource: Resource,
    id: string,
    options: WriteOptions,
    stale: () => never,
  ): Promise<WriteResult | undefined> {
    const indexer = this.deps.indexer;
    if (this.client || !indexer.replacedResourceParts) {
      return undefined;
    }
    const { resourceType } = resource;
    const current = await selectCurrentToWrite(
      this.deps.pool,
      resourceType,
      id,
      this.projects,
      this.writableBy(resourceType),
      false,
    );
    if (!current || current.deleted || this.needsWriteCheck(resourceType, current.projectId)) {
      return undefined;
    }
    if (options.ifMatch !== undefined && current.versionId !== options.ifMatch) {
      stale();
    }
    if (!current.allowed) {
      fail(forbiddenWith(`Not allowed to modify ${resourceType}/${id}`));
    }
    const input = this.guardedInput(resource, current);
    const version = this.buildVersion(
      input,
      id,
      current.projectId,
      current.versionId + 1,
      this.laterThan(current.lastUpdated),
    );
    version.replaces = current.content;
    const values: unknown[] = [];
    const param = (value: unknown, cast: string): string => {
      values.push(value);
      return `$${values.length}::${cast}`;
    };
    const { parts, written } = replaceVersionParts(version, current, param);
    const indexParts = await indexer.replacedResourceParts(this.deps.pool, version, param, written);
    if (!indexParts) {
      return undefined;
    }
    const text = `WITH ${[...parts, ...indexParts].join(',\n')} SELECT ${written} AS written`;
    const result = await this.deps.pool.query<{ written: boolean }>({
      name: preparedName('hearth_update', text),
      text,
      values,
    });
    if (!result.rows[0]?.written) {
      return undefined;
    }
    this.emit([toEvent({ version, interaction: 'update', previous: current })]);
    return this.toWriteResult(version, false);
  }

  /** Conditional update: PUT Type?query. */
  async conditionalUpdate<T extends Resource>(resource: T, query: string): Promise<WriteResult & { resource: T }> {
    this.assertType(resource.resourceType);
    return this.withTransaction(async (repo) => {
      await repo.lockCondition(resource.resourceType, query);
      const ids = await repo.deps.matcher.findIds(repo.db, repo.scope, resource.resourceType, query, 2);
      if (ids.length > 1) {
        fail(preconditionFailed(`Conditional update matched ${ids.length} or more ${resource.resourceType} resources`));
      }
      if (ids.length === 1) {
        if (resource.id && resource.id !== ids[0]) {
          fail(
            badRequest(
              `Resource id ${resource.id} does not match the resource found (${ids[0]})`,
              `${resource.resourceType}.id`,
            ),
          );
        }
        return repo.updateResource({ ...resource, id: ids[0] });
      }
      return resource.id ? repo.updateResource(resource) : repo.createResource(resource);
    });
  }

  async deleteResource(resourceType: string, id: string, options: WriteOptions = {}): Promise<void> {
    this.assertType(resourceType);
    const condition = this.visibleTo(resourceType, 'delete');
    if (!isValidId(id)) {
      fail(notFoundWith(`${resourceType}/${id} not found`));
    }
    await this.inWriteTransaction(async (client, events) => {
      // Locked like an update, so a delete lands after (or before) concurrent updates, never beside them.
      const current = await selectCurrentForUpdate(client, resourceType, id, this.projects, condition);
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
        lastUpdated: this.laterThan(current.lastUpdated),
        deleted: true,
        content: '',
        compartments: [],
      };
      const item: WriteItem = { version, interaction: 'delete', previous: current };
      // The row is locked: the write cannot lose a race.
      await this.writeItems(client, [item]);
      events.push(toEvent(item));
    });
  }

  /** Conditional delete: deletes every match, up to `max` (more: 412). Returns how many were deleted. */
  async conditionalDelete(resourceType: string, query: string, max: number): Promise<number> {
    this.assertType(resourceType);
    return this.withTransaction(async (repo) => {
      await repo.lockCondition(resourceType, query);
      const ids = await repo.deps.matcher.findIds(repo.db, repo.scope, resourceType, query, max + 1);
      if (ids.length > max) {
        fail(preconditionFailed(`Conditional delete matched more than ${max} ${resourceType} resources`));
      }
      for (const id of ids) {
        await repo.deleteResource(resourceType, id);
      }
      return ids.length;
    });
  }

  /**
   * Ids of up to `limit` resources matching a condition. Inside a transaction the condition is
   * locked until the commit, so two transactions resolving the same condition take turns
   * (transaction Bundles: conditional creates and updates resolve their ids before writing).
   */
  async findMatches(resourceType: string, query: string, limit: number): Promise<string[]> {
    this.assertType(resourceType);
    if (this.client) {
      await this.lockCondition(resourceType, query);
    }
    return this.deps.matcher.findIds(this.db, this.scope, resourceType, query, limit);
  }

  /** The id of the single resource matching a condition (conditional patch): 404 none, 412 several. */
  async resolveCondition(resourceType: string, query: string): Promise<string> {
    this.assertType(resourceType);
    const ids = await this.deps.matcher.findIds(this.db, this.scope, resourceType, query, 2);
    if (ids.length === 0) {
      fail(notFoundWith(`No ${resourceType} matches ${query}`));
    }
    if (ids.length > 1) {
      fail(preconditionFailed(`The condition matched ${ids.length} or more ${resourceType} resources`));
    }
    return ids[0];
  }

  /**
   * Creates many new resources at once (transaction Bundles, imports, automation AuditEvents):
   * outside a transaction, one statement for the resources and their index rows; inside a caller's
   * transaction, one multi-row statement for the resources, one for the index rows. Resources must
   * already carry their final ids.
   */
  async createMany(resources: Resource[]): Promise<WriteResult[]> {
    const versions = resources.map((r) => {
      this.assertType(r.resourceType);
      if (!isValidId(r.id)) {
        fail(badRequest('Resource id is missing or invalid', `${r.resourceType}.id`));
      }
      const input = this.guardedInput(r, undefined);
      this.validate(input);
      return this.buildVersion(input, r.id, this.scope.projectId, 1);
    });
    if (versions.length > 0 && !(await this.createInOneStatement(versions))) {
      await this.writeBatch(versions.map((version) => ({ version, interaction: 'create' as const })));
    }
    return versions.map((v) => this.toWriteResult(v, true));
  }

  /** Serialises advisory locks on one condition, so identical conditional writes cannot both create. */
  private async lockCondition(resourceType: string, query: string): Promise<void> {
    const normalized = query.split('&').filter(Boolean).sort().join('&');
    await this.db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `${this.scope.projectId}|${resourceType}|${normalized}`,
    ]);
  }

  private buildVersion(
    resource: Resource,
    id: string,
    projectId: string,
    versionId: number,
    lastUpdated = this.now(),
  ): StoredVersion {
    return buildStoredVersion({
      resource,
      id,
      projectId,
      versionId,
      lastUpdated,
      author: this.scope.author,
      compartments: (r) => this.deps.indexer.compartmentsOf(r),
    });
  }

  /** lastUpdated never goes backwards within one resource's history, whatever the clocks do. */
  private laterThan(previous: Date): Date {
    const now = this.now();
    return now > previous ? now : new Date(previous.getTime() + 1);
  }

  /**
   * Runs fn in a write transaction: a new one, or a savepoint inside the caller's (so a failed
   * write leaves the caller's transaction usable). The events fn collects are emitted after the
   * commit (or, inside a caller's transaction, after the caller's commit).
   */
  private async inWriteTransaction<T>(fn: (client: PoolClient, events: WriteEvent[]) => Promise<T>): Promise<T> {
    const events: WriteEvent[] = [];
    let result: T;
    if (this.client) {
      const client = this.client;
      await client.query('SAVEPOINT hearth_write');
      try {
        result = await fn(client, events);
        await client.query('RELEASE SAVEPOINT hearth_write');
      } catch (err) {
        await client.query('ROLLBACK TO SAVEPOINT hearth_write');
        throw err;
      }
    } else {
      const client = await this.deps.pool.connect();
      try {
        await client.query('BEGIN');
        result = await fn(client, events);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    }
    this.emit(events);
    return result;
  }

  /** Writes new resources (version 1) and their index rows in one transaction. */
  private async writeBatch(items: WriteItem[]): Promise<void> {
    await this.inWriteTransaction(async (client, events) => {
      await this.writeItems(client, items);
      events.push(...items.map(toEvent));
    });
  }

  /**
   * Writes versions and their index rows inside the caller's transaction. A version whose
   * predecessor is not the stored one is not written: with tolerateRace (single items only) that
   * returns false with nothing written; otherwise it is a conflict.
   */
  private async writeItems(client: PoolClient, items: WriteItem[], tolerateRace = false): Promise<boolean> {
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
    await this.deps.indexer.index(client, versions);
    await this.verifyWritten(client, versions);
    return true;
  }

  private toWriteResult(version: StoredVersion, created: boolean): WriteResult {
    return this.shown(
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
   * Applies the access guard to a resource about to be written over `previous` (none: a create):
   * the interaction must be granted; server-owned, read-only and hidden fields are kept.
   */
  private guardedInput<T extends Resource>(resource: T, previous: CurrentRow | undefined): T {
    const guard = this.scope.access;
    if (!guard) {
      return resource;
    }
    const existing = previous && !previous.deleted ? parseStored(previous.content) : undefined;
    guard.assertInteraction(resource.resourceType, existing ? 'update' : 'create');
    return guard.prepareWrite(resource, existing) as T;
  }

  /** Whether a row written in `projectId` must be read back against the access policy's write condition. */
  private needsWriteCheck(resourceType: string, projectId: string): boolean {
    return this.scope.access?.writeCheckNeeded(resourceType, projectId) ?? false;
  }

  /** Each written row must meet the write condition as stored (index rows included), before COMMIT. */
  private async verifyWritten(client: PoolClient, versions: StoredVersion[]): Promise<void> {
    const guard = this.scope.access;
    if (!guard) {
      return;
    }
    // One query per type and project, not per row: a transaction Bundle writes hundreds at once.
    const groups = new Map<string, StoredVersion[]>();
    for (const v of versions) {
      if (v.deleted || !this.needsWriteCheck(v.resourceType, v.projectId)) {
        continue;
      }
      const key = `${v.resourceType}|${v.projectId}`;
      const group = groups.get(key);
      if (group) {
        group.push(v);
      } else {
        groups.set(key, [v]);
      }
    }
    for (const group of groups.values()) {
      const { resourceType, projectId } = group[0];
      const rows = await selectCurrentMany(
        client,
        resourceType,
        group.map((v) => v.id),
        [projectId],
        this.writableBy(resourceType),
      );
      const found = new Set(rows.map((r) => r.id));
      if (group.some((v) => !found.has(v.id))) {
        fail(forbiddenWith(`The ${resourceType} as written would be outside what this access policy allows`));
      }
    }
  }
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

/**
 * An id is taken on the whole server, whichever project holds it (a deleted resource's too: its
 * history still answers to it). The answer never says which project that is.
 */
function idTaken(resourceType: string, id: string): OperationOutcome {
  return conflict(
    `${resourceType}/${id} already exists: an id names one ${resourceType} on this server, so this one cannot be created; choose another id`,
    'duplicate',
    `${resourceType}.id`,
  );
}

/** The unique key refused a write of `versions` (which one, PostgreSQL says only in its own words). */
function idsTaken(versions: StoredVersion[]): OperationOutcome {
  return versions.length === 1
    ? idTaken(versions[0].resourceType, versions[0].id)
    : conflict('A resource with one of these ids already exists on this server');
}

function toEvent(item: WriteItem): WriteEvent {
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
