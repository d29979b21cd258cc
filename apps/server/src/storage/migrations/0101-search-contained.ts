import { INDEX_TABLES } from './0100-search-index.js';
import type { Migration } from './types.js';

/**
 * Contained resources get index rows of their own, so that a chain can look inside them
 * (hl7.org/fhir/R4/search.html#contained: "a chained search is evaluated inside contained
 * resources"). Their rows carry the container's id in owner_id (the row's resource_id is
 * 'containerId#containedId'), so that replacing or deleting the container removes them.
 */
export const m0101SearchContained: Migration = {
  id: 101,
  name: 'search: index rows of contained resources',
  async up(client) {
    for (const table of INDEX_TABLES) {
      await client.query(`ALTER TABLE ${table} ADD COLUMN owner_id text`);
      await client.query(`CREATE INDEX ${table}_owner_idx ON ${table} (owner_id) WHERE owner_id IS NOT NULL`);
    }
  },
};
