import type { Migration } from './types.js';
import { INDEX_TABLES } from './0100-search-index.js';

/**
 * The search index tables take several rows per resource write, and every update deletes and
 * re-inserts some: they churn faster than any resource table. With PostgreSQL's default
 * thresholds (analyze after 10% of a table changed, vacuum after 20%) a large index table went
 * through 218,000 changes without an ANALYZE in the benchmark, and the planner, still believing
 * a code was rare, read every row of it to test one resource (6.6 ms instead of 0.05 ms).
 * Analyze after 2%, vacuum after 5%: the statistics follow the data, dead rows stay few.
 */
export const m0103SearchAutovacuum: Migration = {
  id: 103,
  name: 'search: autovacuum and autoanalyze the index tables sooner',
  async up(client) {
    for (const table of INDEX_TABLES) {
      await client.query(
        `ALTER TABLE ${table} SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_scale_factor = 0.05)`,
      );
    }
  },
};
