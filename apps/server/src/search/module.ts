import { withTransaction, type Pool } from '../platform/postgres.js';
import { resourceTypes } from './resource-types.js';
import { SearchEngine, type ResourceShaper } from './engine.js';
import { reindexInBackground, ReindexTracker } from './index/background.js';
import { Indexer } from './index/indexer.js';
import { searchParamsFor } from './metadata.js';
import type { SubsumptionLookup, ValueSetExpander } from './query/context.js';
import { elementTokenParam } from './registry/params.js';
import { SearchParamRegistry } from './registry/project-params.js';
import type { SearchModule } from './service.js';

export interface SearchModuleOptions {
  pool: Pool;
  /** The server's FHIR base ('https://host/fhir/R4/'): absolute references to it are indexed as local. */
  fhirBase?: string;
  /** Applies _summary / _elements (resources/elements.ts shapeResource with the definitions' shaper). */
  shape?: ResourceShaper;
  /** Expands value sets for :in / :not-in (the terminology module). */
  expandValueSet?: ValueSetExpander;
  /** Code hierarchies for token :above / :below and _filter ss / sb (the terminology module). */
  subsumedCodes?: SubsumptionLookup;
  /** How long a project's own search parameters are kept without reading them again (HEARTH_CACHE_MAX_AGE_MS). */
  paramsMaxAgeMs?: number;
}

/**
 * Rewrites the index rows of every resource of `types` (all types when omitted) in one project
 * or all, each project and type in its own transaction. For the super admin's reindex (after
 * an upgrade that changes how values are indexed). Returns the number of resources.
 */
async function reindexAll(pool: Pool, indexer: Indexer, types?: string[], projectId?: string): Promise<number> {
  const projects = projectId
    ? [projectId]
    : (await pool.query<{ project_id: string }>('SELECT DISTINCT project_id FROM resource')).rows.map(
        (r) => r.project_id,
      );
  const all = types ?? [...resourceTypes()];
  let count = 0;
  for (const project of projects) {
    for (const type of all) {
      count += await withTransaction(pool, (client) => indexer.reindex(client, project, [type]));
    }
  }
  return count;
}

/** Write-time indexing, conditional matching and the search API, wired together. */
export function createSearchModule(options: SearchModuleOptions): SearchModule {
  const registry = new SearchParamRegistry(options.paramsMaxAgeMs);
  const tracker = new ReindexTracker();
  const engine = new SearchEngine({
    reindexing: (projectId, type) => tracker.has(projectId, type),
    pool: options.pool,
    registry,
    shape: options.shape,
    expandValueSet: options.expandValueSet,
    subsumedCodes: options.subsumedCodes,
  });
  const indexer = new Indexer({ registry, fhirBase: options.fhirBase });
  return {
    indexer,
    reindexer: {
      index: (client, versions) => indexer.replaceRows(client, versions),
      compartmentsOf: (resource) => indexer.compartmentsOf(resource),
    },
    reindex: (types, projectId) => reindexAll(options.pool, indexer, types, projectId),
    matcher: engine,
    service: engine,
    registry,
    searchParamsFor: (resourceType, projectId) => searchParamsFor(registry, options.pool, resourceType, projectId),
    patientCompartmentsOf: (resource) => indexer.patientCompartmentsOf(resource),
    elementTokenParam: async (resourceType, element, projectId) => {
      await registry.ensure(options.pool, projectId);
      return elementTokenParam(registry.paramsFor(resourceType, projectId), resourceType, element);
    },
    useJobQueue: (jobs, logger) =>
      reindexInBackground(jobs, { pool: options.pool, indexer, registry, logger, tracker }),
  };
}
