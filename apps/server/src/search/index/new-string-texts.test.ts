/**
 * The lookup of new string values (newStringTextsSql). On a new database (no statistics until the
 * first ANALYZE, autovacuum off) the planner served its `=` with the trigram GIN index, reading the
 * whole pending list on every probe: 92 ms per Patient create, seen with auto_explain. The range
 * form cannot be served by that index at all, so no statistics can lead the planner there.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { newStringTextsSql } from './writer.js';

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

const explain = async (sql: string, values: string[]): Promise<string> => {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, [values]);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
};

it('adds only the values not yet stored', async () => {
  await client.query(newStringTextsSql('$1::text[]'), [['smith', 'jones']]);
  await client.query(newStringTextsSql('$1::text[]'), [['jones', 'garcia', 'garcia']]);
  const { rows } = await client.query<{ value: string }>(
    `SELECT value FROM search_string_text WHERE value = ANY($1::text[]) ORDER BY value`,
    [['smith', 'jones', 'garcia']],
  );
  // Each once: the second statement added garcia alone (once, though given twice).
  expect(rows.map((r) => r.value)).toEqual(['garcia', 'jones', 'smith']);
});

it('can never be served by the trigram index, whatever the planner would prefer', async () => {
  const values = ['smith', 'jo', 'garcia'];
  await client.query('BEGIN');
  try {
    // Leave the planner nothing but the trigram index (and a sequential scan it is told to avoid).
    await client.query('DROP INDEX search_string_text_value_idx');
    await client.query('SET LOCAL enable_seqscan = off');
    // The trap this guards against: with `=`, the trigram index serves the lookup.
    const withEquals = newStringTextsSql('$1::text[]').replace(
      's.value >= v.value AND s.value <= v.value',
      's.value = v.value',
    );
    expect(withEquals).not.toBe(newStringTextsSql('$1::text[]'));
    expect(await explain(withEquals, values)).toContain('search_string_text_trgm_idx');
    // The lookup as written: the trigram index cannot answer a range.
    expect(await explain(newStringTextsSql('$1::text[]'), values)).not.toContain('search_string_text_trgm_idx');
  } finally {
    await client.query('ROLLBACK');
  }
  // With its btree, that is the index it uses.
  expect(await explain(newStringTextsSql('$1::text[]'), values)).toContain('search_string_text_value_idx');
});
