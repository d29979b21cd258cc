import type { Pool } from '../platform/postgres.js';
import { SearchEngine, type ResourceShaper } from './engine.js';
import { Indexer } from './index/indexer.js';
import { searchParamsFor } from './metadata.js';
import type { ValueSetExpander } from './query/context.js';
import { SearchParamRegistry } from './registry/project-params.js';
import type { SearchModule } from './service.js';

export interface SearchModuleOptions {
  pool: Pool;
  /** The server's FHIR base ('https://host/fhir/R4/'): absolute references to it are indexed as local. */
  fhirBase?: string;
  /** Applies _summary / _elements (fhir/elements.ts shapeResource with the definitions' shaper). */
  shape?: ResourceShaper;
  /** Expands value sets for :in / :not-in (the terminology module). */
  expandValueSet?: ValueSetExpander;
}

/** Write-time indexing, conditional matching and the search API, wired together. */
export function createSearchModule(options: SearchModuleOptions): SearchModule {
  const registry = new SearchParamRegistry();
  const engine = new SearchEngine({
    pool: options.pool,
    registry,
    shape: options.shape,
    expandValueSet: options.expandValueSet,
  });
  return {
    indexer: new Indexer({ registry, fhirBase: options.fhirBase }),
    matcher: engine,
    service: engine,
    registry,
    searchParamsFor: (resourceType, projectId) => searchParamsFor(registry, options.pool, resourceType, projectId),
  };
}
