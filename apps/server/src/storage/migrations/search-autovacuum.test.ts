import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { INDEX_TABLES } from './0100-search-index.js';

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

it('every search index table is analyzed after 2% and vacuumed after 5% of it changed', async () => {
  const { rows } = await client.query<{ relname: string; reloptions: string[] | null }>(
    'SELECT relname, reloptions FROM pg_class WHERE relname = ANY($1::text[]) ORDER BY relname',
    [[...INDEX_TABLES]],
  );
  expect(rows.map((r) => r.relname)).toEqual([...INDEX_TABLES].sort());
  for (const row of rows) {
    expect(row.reloptions, row.relname).toEqual(
      expect.arrayContaining(['autovacuum_analyze_scale_factor=0.02', 'autovacuum_vacuum_scale_factor=0.05']),
    );
  }
});
