import { createValidator } from '../resources/definitions.js';
import { createLogger, type Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import { createSearchModule } from '../search/module.js';
import type { RepositoryDeps } from '../storage/types.js';
import { withTerminologyIndexing } from './indexer.js';
import { loadR4Terminology, type LoadResult } from './loader.js';

/**
 * Loads the R4 terminology into a migrated database without starting a server, with the same
 * search and terminology indexing as a first start. For a database others are cloned from (the
 * test template, tools/test/global-setup.ts): clones then start without loading, since the
 * terminology project is independent of each clone's super admin project.
 */
export async function preloadTerminology(pool: Pool, logger: Logger = createLogger('silent')): Promise<LoadResult> {
  const search = createSearchModule({ pool });
  const globalProjects = new Set<string>();
  const deps: RepositoryDeps = {
    pool,
    validator: createValidator(),
    indexer: withTerminologyIndexing(search.indexer, globalProjects),
    matcher: search.matcher,
  };
  return loadR4Terminology(pool, deps, logger, (id) => globalProjects.add(id));
}
