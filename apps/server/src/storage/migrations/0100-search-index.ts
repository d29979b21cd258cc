import type { Migration } from './types.js';

/**
 * Search index: one lookup table per parameter kind, one row per indexed value
 * (docs/adr/0002-search-index.md). Every row carries the owning resource's type, id and project;
 * `code` is the parameter code ('name', 'code-value-quantity#1' for a composite's part);
 * `grp` ties the parts of one composite value together; is_min / is_max mark the row holding
 * the resource's smallest / largest value of that parameter, which `_sort` joins on.
 * Text compared as bytes (COLLATE "C") where only equality and prefixes matter: faster, and a
 * plain btree then serves LIKE 'abc%'.
 */
/** The lookup tables, one per parameter kind (later migrations tune them all). */
export const INDEX_TABLES = [
  'search_token',
  'search_string',
  'search_date',
  'search_number',
  'search_quantity',
  'search_reference',
  'search_uri',
] as const;

export const m0100SearchIndex: Migration = {
  id: 100,
  name: 'search: lookup tables per parameter kind',
  async up(client) {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    const common = `
      resource_type text COLLATE "C" NOT NULL,
      resource_id text NOT NULL,
      project_id uuid NOT NULL,
      code text COLLATE "C" NOT NULL,
      grp smallint NOT NULL DEFAULT 0,
      is_min boolean NOT NULL DEFAULT true,
      is_max boolean NOT NULL DEFAULT true`;
    const tables: [string, string][] = [
      ['search_token', 'system text COLLATE "C", value text COLLATE "C", text text COLLATE "C"'],
      ['search_string', 'value text COLLATE "C" NOT NULL, raw text'],
      ['search_date', 'low timestamptz NOT NULL, high timestamptz NOT NULL'],
      ['search_number', 'low numeric NOT NULL, high numeric NOT NULL'],
      [
        'search_quantity',
        'system text COLLATE "C", unit text COLLATE "C", low numeric NOT NULL, high numeric NOT NULL, ' +
          'nunit text COLLATE "C", nlow numeric NOT NULL, nhigh numeric NOT NULL',
      ],
      ['search_reference', 'target_type text COLLATE "C", target_id text, ref text COLLATE "C"'],
      ['search_uri', 'value text COLLATE "C" NOT NULL'],
    ];
    for (const [name, columns] of tables) {
      await client.query(`CREATE TABLE ${name} (${common}, ${columns})`);
      // Semi-joins from a resource, _include, and replacing a resource's rows.
      await client.query(`CREATE INDEX ${name}_resource_idx ON ${name} (resource_id, code)`);
    }
    await client.query('CREATE INDEX search_token_value_idx ON search_token (resource_type, code, value, system)');
    await client.query('CREATE INDEX search_string_value_idx ON search_string (resource_type, code, value)');
    await client.query('CREATE INDEX search_string_trgm_idx ON search_string USING gin (value gin_trgm_ops)');
    await client.query('CREATE INDEX search_date_low_idx ON search_date (resource_type, code, low)');
    await client.query('CREATE INDEX search_date_high_idx ON search_date (resource_type, code, high)');
    await client.query('CREATE INDEX search_number_low_idx ON search_number (resource_type, code, low)');
    await client.query('CREATE INDEX search_quantity_low_idx ON search_quantity (resource_type, code, nunit, nlow)');
    await client.query(
      'CREATE INDEX search_reference_target_idx ON search_reference (resource_type, code, target_id, target_type)',
    );
    await client.query(
      'CREATE INDEX search_reference_ref_idx ON search_reference (resource_type, code, ref) WHERE ref IS NOT NULL',
    );
    await client.query('CREATE INDEX search_uri_value_idx ON search_uri (resource_type, code, value)');
  },
};
