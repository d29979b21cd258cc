import type { Migration } from './types.js';

/**
 * `:contains` and `:text` on string parameters find their values through a trigram index. It used to
 * cover every search_string row: about 18 rows per Patient (each name and address part under
 * several parameters, phonetic keys), 4-10 kB of WAL per create, a third to half of the create's
 * whole WAL (docs/performance.md). Most of those rows repeat a value already stored (family and
 * given names, cities, states, phonetic keys), so the trigrams now index the distinct values only
 * (search_string_text, written beside the rows when a value is new: index/writer.ts), and a
 * `:contains` search finds the matching values there, then their rows through
 * search_string_value_idx. Values are never removed: one no row holds any more matches nothing.
 * Not unique: two writes adding one new value at once may both insert it (harmless; a unique
 * index would make the second wait for the first and could deadlock transactions).
 */
export const m0104SearchStringTexts: Migration = {
  id: 104,
  name: 'search: trigram index over distinct string values only',
  async up(client) {
    await client.query('CREATE TABLE search_string_text (value text COLLATE "C" NOT NULL)');
    await client.query('INSERT INTO search_string_text (value) SELECT DISTINCT value FROM search_string');
    await client.query('CREATE INDEX search_string_text_value_idx ON search_string_text (value)');
    await client.query('CREATE INDEX search_string_text_trgm_idx ON search_string_text USING gin (value gin_trgm_ops)');
    await client.query('DROP INDEX IF EXISTS search_string_trgm_idx');
    await client.query('ANALYZE search_string_text');
  },
};
