/**
 * Materialised views: ViewDefinition/{id}/$materialize keeps a view as a table of the project's
 * reporting schema (reporting_<project>), readable by the schema's read-only role, so BI tools query
 * it with plain SQL (docs/analytics.md). The build runs in one transaction (readers see the old
 * table or the new one, never half); afterwards every committed write of the view's type in the
 * project is applied to the table by the process that committed it (a write listener): the
 * resource's rows are replaced, or removed on delete, guarded by the version so that an older
 * version never overwrites a newer one.
 */
import { badRequest, conflict, fail, forbiddenWith, type Resource } from '@hearth/core';
import type { OperationRegistry } from '../operations/registry.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import { jsonResult } from '../operations/result.js';
import type { Logger } from '../platform/logger.js';
import { withTransaction, type Pool, type Queryable } from '../platform/postgres.js';
import { isResourceTypeName } from '../search/resource-types.js';
import type { SearchService } from '../search/service.js';
import { Repository } from '../storage/repository.js';
import type { RepositoryDeps, StoredVersion, WriteEvent } from '../storage/types.js';
import type { WriteSubscriptions } from '../storage/write-events.js';
import { VIEW_MATERIALIZE } from './operation-definitions.js';
import {
  createTableSql,
  insertRows,
  quoteIdent,
  readerRole,
  reportingSchema,
  RESOURCE_ID,
  RESOURCE_VERSION,
  viewTable,
} from './reporting-sql.js';
import { compileOrFail } from './run.js';
import { resourcePages } from './source.js';
import { compileView, type CompiledView, type Row } from './view.js';

export interface MaterializeDeps {
  pool: Pool;
  search: SearchService;
  repositoryDeps: RepositoryDeps;
  writes: WriteSubscriptions;
  logger: Logger;
  /** True when the caller administers their project (only they may create tables and roles). */
  isProjectAdmin(input: OperationInput): boolean;
}

interface Materialized {
  viewId: string;
  resourceType: string;
  schema: string;
  table: string;
  view: CompiledView;
}

/** How long a process trusts its list of a project's materialised views (another process may add one). */
const VIEWS_CACHE_MS = 5_000;

export class Materializer {
  private readonly cache = new Map<string, { at: number; views: Promise<Materialized[]> }>();
  private tail: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;

  constructor(private readonly deps: MaterializeDeps) {}

  register(registry: OperationRegistry): void {
    registry.register({ definition: VIEW_MATERIALIZE, handler: (input) => this.operation(input) });
  }

  /** Starts applying committed writes to the materialised tables. */
  start(): void {
    this.unsubscribe ??= this.deps.writes.subscribe((events) => this.onWrite(events));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Resolves once every write heard so far is applied (tests, shutdown). */
  idle(): Promise<void> {
    return this.tail;
  }

  private async operation(input: OperationInput): Promise<OperationResult> {
    if (!this.deps.isProjectAdmin(input)) {
      fail(forbiddenWith('Only a project admin may materialise a view: it creates tables and a database role'));
    }
    const { repo } = input.context;
    const id = input.target.id as string;
    const stored = (await repo.readResource('ViewDefinition', id)).resource;
    const projectId = repo.scope.projectId;
    const drop = new URLSearchParams(input.query).get('drop') ?? dropParam(input.body);
    if (drop === 'true') {
      await this.drop(projectId, id);
      return jsonResult({ resourceType: 'Parameters', parameter: [{ name: 'dropped', valueBoolean: true }] });
    }
    const view = compileOrFail(stored);
    // The project's own data, as the admin reads it (not what linked projects let them read).
    const own = new Repository(this.deps.repositoryDeps, { ...repo.scope, readProjects: [projectId] });
    const result = await this.build(own, input.context.fhirBase, projectId, id, stored, view);
    return jsonResult({
      resourceType: 'Parameters',
      parameter: [
        { name: 'schema', valueString: result.schema },
        { name: 'table', valueString: result.table },
        { name: 'role', valueString: readerRole(result.schema) },
        { name: 'rows', valueInteger: result.rows },
      ],
    });
  }

  /** (Re)builds the table of a view from every resource of its type in the project. */
  async build(
    repo: Repository,
    fhirBase: string,
    projectId: string,
    viewId: string,
    definition: Resource,
    view: CompiledView,
  ): Promise<{ schema: string; table: string; rows: number }> {
    const schema = reportingSchema(projectId);
    const role = readerRole(schema);
    const table = viewTable(view.name, viewId);
    const started = new Date().toISOString();
    let count = 0;
    await withTransaction(this.deps.pool, async (client) => {
      const taken = await client.query<{ view_id: string }>(
        'SELECT view_id FROM analytics_view WHERE schema_name = $1 AND table_name = $2 AND view_id <> $3',
        [schema, table, viewId],
      );
      if (taken.rows.length > 0) {
        fail(
          conflict(`Table ${table} already holds ViewDefinition/${taken.rows[0].view_id}: give this view another name`),
        );
      }
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      // Roles are server-wide: created once, with nothing but what the grants below give.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [role]);
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      if (exists.rows.length === 0) await client.query(`CREATE ROLE ${quoteIdent(role)} NOLOGIN`);
      await client.query(`GRANT USAGE ON SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`);
      const previous = await client.query<{ table_name: string }>(
        'SELECT table_name FROM analytics_view WHERE project_id = $1 AND view_id = $2',
        [projectId, viewId],
      );
      for (const old of [...previous.rows.map((r) => r.table_name), table]) {
        await client.query(`DROP TABLE IF EXISTS ${quoteIdent(schema)}.${quoteIdent(old)}`);
      }
      await client.query(createTableSql(schema, table, view.columns));
      for await (const page of resourcePages(
        this.deps.search,
        repo,
        fhirBase,
        view.resource,
        {},
        view.needsDecimalText,
      )) {
        const rows = page.flatMap((resource) => rowsOf(view, resource));
        count += rows.length;
        await insertRows(client, schema, table, view.columns, rows);
      }
      await client.query(`CREATE INDEX ON ${quoteIdent(schema)}.${quoteIdent(table)} (${quoteIdent(RESOURCE_ID)})`);
      await client.query(`GRANT SELECT ON ${quoteIdent(schema)}.${quoteIdent(table)} TO ${quoteIdent(role)}`);
      await client.query(
        `INSERT INTO analytics_view (project_id, view_id, resource_type, schema_name, table_name, definition, materialized_at)
         VALUES ($1, $2, $3, $4, $5, $6, now())
         ON CONFLICT (project_id, view_id) DO UPDATE SET resource_type = $3, schema_name = $4, table_name = $5,
           definition = $6, materialized_at = now()`,
        [projectId, viewId, view.resource, schema, table, JSON.stringify(definition)],
      );
    });
    this.cache.delete(projectId);
    // Writes committed while the table was built were not heard for it: apply them now.
    for await (const page of resourcePages(
      this.deps.search,
      repo,
      fhirBase,
      view.resource,
      { since: started },
      view.needsDecimalText,
    )) {
      for (const resource of page) {
        await this.apply({ viewId, resourceType: view.resource, schema, table, view }, versionOf(resource, projectId));
      }
    }
    return { schema, table, rows: count };
  }

  /** Drops a view's table and stops keeping it. */
  async drop(projectId: string, viewId: string): Promise<void> {
    await withTransaction(this.deps.pool, async (client) => {
      const found = await client.query<{ schema_name: string; table_name: string }>(
        'DELETE FROM analytics_view WHERE project_id = $1 AND view_id = $2 RETURNING schema_name, table_name',
        [projectId, viewId],
      );
      for (const row of found.rows) {
        await client.query(`DROP TABLE IF EXISTS ${quoteIdent(row.schema_name)}.${quoteIdent(row.table_name)}`);
      }
    });
    this.cache.delete(projectId);
  }

  private views(projectId: string): Promise<Materialized[]> {
    const cached = this.cache.get(projectId);
    if (cached && Date.now() - cached.at < VIEWS_CACHE_MS) return cached.views;
    const views = loadViews(this.deps.pool, projectId);
    this.cache.set(projectId, { at: Date.now(), views });
    views.catch(() => this.cache.delete(projectId));
    return views;
  }

  private onWrite(events: WriteEvent[]): void {
    const work = async () => {
      for (const event of events) {
        const version = event.version;
        // A deleted ViewDefinition takes its table with it.
        if (version.resourceType === 'ViewDefinition' && version.deleted) {
          await this.drop(version.projectId, version.id);
          continue;
        }
        const views = (await this.views(version.projectId)).filter((v) => v.resourceType === version.resourceType);
        for (const view of views) await this.apply(view, version);
      }
    };
    this.tail = this.tail.then(work).catch((err: unknown) => {
      this.deps.logger.error({ err }, 'analytics: applying writes to materialised views failed');
    });
  }

  /** Replaces one resource's rows by those of `version` (none when deleted), unless the table holds a newer version. */
  private async apply(view: Materialized, version: StoredVersion): Promise<void> {
    await withTransaction(this.deps.pool, async (client) => {
      const target = `${quoteIdent(view.schema)}.${quoteIdent(view.table)}`;
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${view.schema}.${view.table}/${version.id}`]);
      const newest = await client.query<{ v: number | null }>(
        `SELECT max(${quoteIdent(RESOURCE_VERSION)}) AS v FROM ${target} WHERE ${quoteIdent(RESOURCE_ID)} = $1`,
        [version.id],
      );
      const held = newest.rows[0]?.v;
      if (held !== null && held !== undefined && held > version.versionId) return;
      await client.query(`DELETE FROM ${target} WHERE ${quoteIdent(RESOURCE_ID)} = $1`, [version.id]);
      if (version.deleted || !version.resource) return;
      await insertRows(client, view.schema, view.table, view.view.columns, rowsOf(view.view, version.resource));
    }).catch((err: unknown) => {
      // A table dropped meanwhile (the view was removed or rebuilt under another name): nothing to keep.
      if ((err as { code?: string }).code === '42P01') return;
      throw err;
    });
  }
}

function dropParam(body: unknown): string | undefined {
  const parameter = (body as { parameter?: { name?: string; valueBoolean?: boolean }[] } | undefined)?.parameter;
  const drop = parameter?.find((p) => p.name === 'drop');
  if (drop && typeof drop.valueBoolean !== 'boolean') fail(badRequest('drop must be a valueBoolean', 'drop'));
  return drop ? String(drop.valueBoolean) : undefined;
}

/** The rows of a resource tagged with it; a resource the view cannot shape (a data error) has none. */
function rowsOf(view: CompiledView, resource: Resource): { resourceId: string; version: number; row: Row }[] {
  let rows: Row[];
  try {
    rows = view.rows(resource);
  } catch {
    rows = [];
  }
  const version = Number(resource.meta?.versionId ?? 1);
  return rows.map((row) => ({ resourceId: resource.id as string, version, row }));
}

function versionOf(resource: Resource, projectId: string): StoredVersion {
  return {
    resourceType: resource.resourceType,
    id: resource.id as string,
    projectId,
    versionId: Number(resource.meta?.versionId ?? 1),
    lastUpdated: new Date(resource.meta?.lastUpdated ?? Date.now()),
    deleted: false,
    resource,
    content: '',
    compartments: [],
  };
}

async function loadViews(db: Queryable, projectId: string): Promise<Materialized[]> {
  const found = await db.query<{
    view_id: string;
    resource_type: string;
    schema_name: string;
    table_name: string;
    definition: unknown;
  }>('SELECT view_id, resource_type, schema_name, table_name, definition FROM analytics_view WHERE project_id = $1', [
    projectId,
  ]);
  return found.rows.flatMap((row) => {
    try {
      const view = compileView(row.definition, isResourceTypeName);
      return [
        { viewId: row.view_id, resourceType: row.resource_type, schema: row.schema_name, table: row.table_name, view },
      ];
    } catch {
      return [];
    }
  });
}
