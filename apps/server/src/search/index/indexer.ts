import type { Resource } from '@hearth/core';
import type { PoolClient } from '../../platform/postgres.js';
import type { SearchIndexer, StoredVersion } from '../../storage/types.js';
import { storedCompartments } from '../compartments.js';
import type { SearchParamRegistry } from '../registry/project-params.js';
import { extractRows } from './extract.js';
import type { RowSet } from './rows.js';
import { writeIndexRows, type IndexEntry } from './writer.js';

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

  async index(client: PoolClient, versions: StoredVersion[]): Promise<void> {
    for (const projectId of new Set(versions.map((v) => v.projectId))) {
      await this.options.registry.ensure(client, projectId);
    }
    const entries: IndexEntry[] = versions.map((v) => ({
      resourceType: v.resourceType,
      id: v.id,
      projectId: v.projectId,
      rows: v.deleted || !v.resource ? undefined : this.rowsOf(v.resource, v.projectId),
      replace: v.versionId > 1,
    }));
    await writeIndexRows(client, entries);
    const changedParams = new Set(versions.filter((v) => v.resourceType === 'SearchParameter').map((v) => v.projectId));
    for (const projectId of changedParams) {
      const types = await this.options.registry.reload(client, projectId);
      await this.reindex(client, projectId, [...types]);
    }
  }

  /**
   * Rewrites the index rows of every resource of `types` in a project, in the caller's
   * transaction (a project's new SearchParameter becomes searchable once this returns).
   */
  async reindex(client: PoolClient, projectId: string, types: string[]): Promise<number> {
    let count = 0;
    for (const type of types) {
      let after = '';
      for (;;) {
        const result = await client.query<{ id: string; content: string }>(
          `SELECT id, content FROM resource WHERE resource_type = $1 AND project_id = $2 AND deleted = false AND id > $3
           ORDER BY id LIMIT ${REINDEX_BATCH}`,
          [type, projectId, after],
        );
        if (result.rows.length === 0) break;
        await writeIndexRows(
          client,
          result.rows.map((r) => ({
            resourceType: type,
            id: r.id,
            projectId,
            rows: this.rowsOf(JSON.parse(r.content) as Resource, projectId),
            replace: true,
          })),
        );
        count += result.rows.length;
        after = result.rows[result.rows.length - 1].id;
      }
    }
    return count;
  }
}
