import type { Resource } from '@hearth/core';
import type { PoolClient, Queryable } from '../../platform/postgres.js';
import { lockForReindex } from '../../storage/sql/versions.js';
import type { SearchIndexer, StoredVersion } from '../../storage/types.js';
import { compartmentParams, storedCompartments } from '../compartments.js';
import type { SearchParamRegistry } from '../registry/project-params.js';
import { extractRows } from './extract.js';
import { rowChanges } from './row-changes.js';
import type { RowSet } from './rows.js';
import { copyIndexRows } from './copy-writer.js';
import { indexRowParts, writeIndexRows, type IndexEntry, type RowChanges } from './writer.js';

export interface IndexerOptions {
  registry: SearchParamRegistry;
  fhirBase?: string;
}

const REINDEX_BATCH = 500;

/**
 * The write side of search. compartmentsOf() runs first (while the version is built) and keeps
 * the extracted rows, so index() reuses them instead of evaluating every expression twice.
 */
export class Indexer implements SearchIndexer {
  private readonly extracted = new WeakMap<Resource, RowSet>();
  /** True once reindexing after a SearchParameter write runs as a job (index/background.ts). */
  reindexInBackground = false;

  constructor(private readonly options: IndexerOptions) {}

  /** The rows of a resource under the base parameters (a project's own are added in index()). */
  private rowsOf(resource: Resource, projectId?: string): RowSet {
    const own = this.options.registry.hasOwn(projectId);
    let rows = own ? undefined : this.extracted.get(resource);
    if (!rows) {
      const params = this.options.registry.paramsFor(resource.resourceType, projectId).values();
      rows = extractRows(resource, params, {
        resource: resource as Record<string, unknown>,
        fhirBase: this.options.fhirBase,
        paramsOf: (type) => this.options.registry.paramsFor(type, projectId).values(),
      });
      if (!own) this.extracted.set(resource, rows);
    }
    return rows;
  }

  compartmentsOf(resource: Resource): string[] {
    return storedCompartments(resource.resourceType, resource.id, this.rowsOf(resource));
  }

  /**
   * The Patient compartments of a resource, the same as compartmentsOf, from its compartment
   * parameters alone (a few expressions instead of all): for readers that hand each resource of a
   * search over several patients (`_compartment=Patient/a,Patient/b`) to the patients it belongs to.
   */
  patientCompartmentsOf(resource: Resource): string[] {
    const params = this.options.registry.paramsFor(resource.resourceType);
    const own = (compartmentParams('Patient', resource.resourceType) ?? []).flatMap((c) => params.get(c) ?? []);
    const rows = extractRows(resource, own, {
      resource: resource as Record<string, unknown>,
      fhirBase: this.options.fhirBase,
    });
    return storedCompartments(resource.resourceType, resource.id, rows);
  }

  async index(client: PoolClient, versions: StoredVersion[]): Promise<void> {
    for (const projectId of new Set(versions.map((v) => v.projectId))) {
      await this.options.registry.ensure(client, projectId);
    }
    const entries: IndexEntry[] = versions.map((v) => {
      const rows = v.deleted || !v.resource ? undefined : this.rowsOf(v.resource, v.projectId);
      return {
        resourceType: v.resourceType,
        id: v.id,
        projectId: v.projectId,
        rows,
        replace: v.versionId > 1,
        changes: rows && v.replaces ? this.changedRows(v.replaces, rows, v.projectId) : undefined,
      };
    });
    await writeIndexRows(client, entries);
    const changedParams = new Set(versions.filter((v) => v.resourceType === 'SearchParameter').map((v) => v.projectId));
    for (const projectId of changedParams) {
      // Writes later in this transaction (and after it) are indexed with the new parameters at once.
      const types = await this.options.registry.reload(client, projectId);
      // Existing resources: in the write's transaction, unless a background job does it after the commit.
      if (!this.reindexInBackground) await this.reindex(client, projectId, [...types]);
    }
  }

  /**
   * Rewrites every index row of each version, whatever its versionId (index() trusts a first
   * version to have none yet): for reindexing resources whose rows may be stale or missing.
   */
  async replaceRows(client: PoolClient, versions: StoredVersion[]): Promise<void> {
    for (const projectId of new Set(versions.map((v) => v.projectId))) {
      await this.options.registry.ensure(client, projectId);
    }
    await writeIndexRows(
      client,
      versions.map((v) => ({
        resourceType: v.resourceType,
        id: v.id,
        projectId: v.projectId,
        rows: v.deleted || !v.resource ? undefined : this.rowsOf(v.resource, v.projectId),
        replace: true,
      })),
    );
  }

  async copyRows(client: PoolClient, versions: StoredVersion[]): Promise<boolean> {
    if (versions.some((v) => v.resourceType === 'SearchParameter' || v.deleted || !v.resource)) {
      return false;
    }
    for (const projectId of new Set(versions.map((v) => v.projectId))) {
      await this.options.registry.ensure(client, projectId);
    }
    await copyIndexRows(
      client,
      versions.map((v) => ({
        resourceType: v.resourceType,
        id: v.id,
        projectId: v.projectId,
        rows: this.rowsOf(v.resource as Resource, v.projectId),
        replace: v.versionId > 1,
      })),
    );
    return true;
  }

  async newResourceParts(
    db: Queryable,
    versions: StoredVersion[],
    param: (value: unknown, cast: string) => string,
  ): Promise<string[] | undefined> {
    if (versions.some((v) => v.resourceType === 'SearchParameter' || v.versionId !== 1 || v.deleted || !v.resource)) {
      return undefined;
    }
    for (const projectId of new Set(versions.map((v) => v.projectId))) {
      await this.options.registry.ensure(db, projectId);
    }
    return indexRowParts(
      versions.map((v) => ({
        resourceType: v.resourceType,
        id: v.id,
        projectId: v.projectId,
        rows: this.rowsOf(v.resource as Resource, v.projectId),
        replace: false,
      })),
      param,
    );
  }

  async replacedResourceParts(
    db: Queryable,
    version: StoredVersion,
    param: (value: unknown, cast: string) => string,
    guard: string,
  ): Promise<string[] | undefined> {
    if (version.resourceType === 'SearchParameter' || version.deleted || !version.resource || !version.replaces) {
      return undefined;
    }
    await this.options.registry.ensure(db, version.projectId);
    const rows = this.rowsOf(version.resource, version.projectId);
    const entry = {
      resourceType: version.resourceType,
      id: version.id,
      projectId: version.projectId,
      rows,
      replace: true,
      changes: this.changedRows(version.replaces, rows, version.projectId),
    };
    return indexRowParts([entry], param, guard);
  }

  /**
   * The rows that differ from those of the replaced version (stored JSON), or undefined to
   * replace them all (contained resources: their rows are keyed by owner, not by kind).
   */
  private changedRows(previousContent: string, rows: RowSet, projectId: string): RowChanges | undefined {
    let previous: RowSet;
    try {
      previous = this.rowsOf(JSON.parse(previousContent) as Resource, projectId);
    } catch {
      return undefined;
    }
    if (rows.contained?.length || previous.contained?.length) {
      return undefined;
    }
    return rowChanges(previous, rows);
  }

  /**
   * Rewrites the index rows of every resource of `types` in a project, in the caller's
   * transaction (a project's new SearchParameter becomes searchable once this returns).
   */
  async reindex(client: PoolClient, projectId: string, types: string[]): Promise<number> {
    let count = 0;
    for (const type of types) {
      let after: string | undefined = '';
      while (after !== undefined) {
        const batch = await this.reindexBatch(client, projectId, type, after);
        count += batch.count;
        after = batch.last;
      }
    }
    return count;
  }

  /**
   * Rewrites the index rows of the next resources of a type after id `after` (at most
   * REINDEX_BATCH). The rows are locked and touched (lockForReindex), so a concurrent update of one
   * of them either commits first (and its new content is read here) or waits for, or falls back
   * behind, this batch's transaction: the index never ends up holding an older version.
   * `last` is undefined when no resources remain.
   */
  async reindexBatch(
    client: PoolClient,
    projectId: string,
    type: string,
    after: string,
  ): Promise<{ count: number; last?: string }> {
    const rows = await lockForReindex(client, type, { projectId, id: after }, REINDEX_BATCH, projectId);
    if (rows.length === 0) return { count: 0 };
    await writeIndexRows(
      client,
      rows.map((r) => ({
        resourceType: type,
        id: r.id,
        projectId,
        rows: this.rowsOf(JSON.parse(r.content) as Resource, projectId),
        replace: true,
      })),
    );
    return { count: rows.length, last: rows[rows.length - 1].id };
  }
}
