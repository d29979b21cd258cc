import type { Migration } from './types.js';

/**
 * The planner multiplies the selectivities of a token search's columns as if independent:
 * resource_type, code, system and value are anything but (a LOINC code comes with system
 * http://loinc.org under the parameter `code` of Observations). A code held by 500 of 5,000
 * Observations was estimated at 82 rows, so `Observation?subject=…&code=…` sometimes hashed every
 * row of the code instead of probing the subject's few (search/test/unanalyzed.test.ts).
 * Extended statistics (the most common combinations and the columns' dependencies) let ANALYZE
 * record the combination itself. Same for a reference's type, parameter and target type.
 */
export const m0105SearchTokenStatistics: Migration = {
  id: 105,
  name: 'search: extended statistics over correlated token and reference columns',
  async up(client) {
    await client.query(
      'CREATE STATISTICS IF NOT EXISTS search_token_combined_stats (mcv, dependencies) ' +
        'ON resource_type, code, system, value FROM search_token',
    );
    await client.query(
      'CREATE STATISTICS IF NOT EXISTS search_reference_combined_stats (mcv, dependencies) ' +
        'ON resource_type, code, target_type FROM search_reference',
    );
  },
};
