/**
 * Migration 0104 on a database written before it: the trigram index moves from every string row to
 * the distinct values, which it lists from the rows already stored, so `:contains` finds them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPool, type Pool } from '../../platform/postgres.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { migrations } from './index.js';
import { runMigrations } from './runner.js';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  pool = createPool({ connectionString: db.url, max: 2, statementTimeoutMs: 0 });
  await runMigrations(
    pool,
    undefined,
    migrations.filter((m) => m.id < 104),
  );
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

it('lists the distinct stored string values, indexes their trigrams and drops the index over every row', async () => {
  const project = randomUUID();
  for (const [id, code, value] of [
    ['a', 'family', 'smith'],
    ['a', 'name', 'smith'],
    ['b', 'family', 'smithers'],
    ['b', 'address', '1 elm street'],
  ]) {
    await pool.query(
      `INSERT INTO search_string (resource_type, resource_id, project_id, code, value, raw) VALUES ('Patient', $1, $2, $3, $4, $4)`,
      [id, project, code, value],
    );
  }
  await runMigrations(pool);
  const values = await pool.query<{ value: string }>('SELECT value FROM search_string_text ORDER BY value');
  expect(values.rows.map((r) => r.value)).toEqual(['1 elm street', 'smith', 'smithers']);
  const indexes = await pool.query<{ indexname: string }>(
    `SELECT indexname FROM pg_indexes WHERE tablename IN ('search_string', 'search_string_text') ORDER BY indexname`,
  );
  expect(indexes.rows.map((r) => r.indexname)).toEqual([
    'search_string_owner_idx',
    'search_string_resource_idx',
    'search_string_text_trgm_idx',
    'search_string_text_value_idx',
    'search_string_value_idx',
  ]);
  // The substring search of string parameters (kinds/string.ts amongValues) over them.
  const found = await pool.query<{ resource_id: string }>(
    `SELECT DISTINCT resource_id FROM search_string x WHERE x.code = 'family'
       AND x.value IN (SELECT sst.value FROM search_string_text sst WHERE sst.value LIKE '%ithe%')`,
  );
  expect(found.rows).toEqual([{ resource_id: 'b' }]);
});
