/**
 * Migration 0002 against a database written before it, holding ids in several projects: the
 * upgrade stops with the list and the recipe and drops nothing; once resolved it applies, and the
 * key then refuses a second project's copy of an id.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPool, pgErrorCode, PG_UNIQUE_VIOLATION, type Pool } from '../../platform/postgres.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { migrations } from './index.js';
import { runMigrations } from './runner.js';

let db: TestDatabase;
let pool: Pool;
const p1 = randomUUID();
const p2 = randomUUID();
const [first, second] = [p1, p2].sort();

async function insert(type: string, id: string, project: string, versions = 1): Promise<void> {
  for (let v = 1; v <= versions; v++) {
    await pool.query(
      `INSERT INTO resource_history (resource_type, id, project_id, version_id, last_updated, content)
       VALUES ($1, $2, $3, $4, now(), $5)`,
      [type, id, project, v, JSON.stringify({ resourceType: type, id, meta: { versionId: String(v) } })],
    );
  }
  await pool.query(
    `INSERT INTO resource (resource_type, id, project_id, version_id, last_updated, content)
     VALUES ($1, $2, $3, $4, now(), $5)`,
    [type, id, project, versions, JSON.stringify({ resourceType: type, id, meta: { versionId: String(versions) } })],
  );
}

async function counts(): Promise<{ current: number; history: number }> {
  const { rows } = await pool.query<{ current: number; history: number }>(
    'SELECT (SELECT count(*)::int FROM resource) AS current, (SELECT count(*)::int FROM resource_history) AS history',
  );
  return rows[0];
}

async function applied(): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>('SELECT id FROM hearth_migration ORDER BY id');
  return rows.map((r) => r.id);
}

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  pool = createPool({ connectionString: db.url, max: 2, statementTimeoutMs: 0 });
  // The database as a release before 0002 left it, written to by projects that shared ids.
  await runMigrations(
    pool,
    undefined,
    migrations.filter((m) => m.id < 2),
  );
  await insert('Patient', 'dup', p1, 2);
  await insert('Patient', 'dup', p2, 1);
  await insert('Observation', 'obs-dup', p1);
  await insert('Observation', 'obs-dup', p2, 3);
  await insert('Patient', 'only-one', p1);
}, 120000);
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

it('stops on ids held by several projects, listing them and how to resolve them, and drops nothing', async () => {
  const before = await counts();
  expect(before).toEqual({ current: 5, history: 8 });
  const failure = await runMigrations(pool).then(
    () => undefined,
    (err: unknown) => err as Error,
  );
  expect(failure).toBeInstanceOf(Error);
  const message = failure?.message ?? '';
  expect(message).toContain('Cannot upgrade: 2 resource id(s) exist in more than one project');
  expect(message).toContain(`Observation/obs-dup in projects ${first}, ${second}`);
  expect(message).toContain(`Patient/dup in projects ${first}, ${second}`);
  expect(message).not.toContain('only-one');
  expect(message).toContain('Nothing was changed');
  expect(message).toContain(`DELETE FROM "T" WHERE resource_type = 'T' AND id = 'I' AND project_id = 'P' AND deleted;`);
  // Nothing dropped, nothing applied: the old key still holds, and later migrations wait.
  expect(await counts()).toEqual(before);
  expect(await applied()).toEqual([1]);
  const key = await pool.query<{ def: string }>(
    "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'resource_pkey'",
  );
  expect(key.rows[0].def).toBe('PRIMARY KEY (resource_type, project_id, id)');
});

it('applies once the duplicates are resolved as the message says, and the key then holds', async () => {
  // Step 2 (through the API of the previous release) leaves the extra copies deleted; step 3 removes them.
  await pool.query(`UPDATE resource SET deleted = true, content = '' WHERE project_id = $1 AND id LIKE '%dup'`, [p2]);
  for (const [type, id] of [
    ['Patient', 'dup'],
    ['Observation', 'obs-dup'],
  ]) {
    await pool.query(
      `DELETE FROM "${type}" WHERE resource_type = '${type}' AND id = '${id}' AND project_id = '${p2}' AND deleted`,
    );
    await pool.query(
      `DELETE FROM "${type}_History" WHERE resource_type = '${type}' AND id = '${id}' AND project_id = '${p2}'`,
    );
  }
  expect(await runMigrations(pool)).toBe(migrations.length - 1);
  expect(await applied()).toEqual(migrations.map((m) => m.id).sort((x, y) => x - y));
  expect(await counts()).toEqual({ current: 3, history: 4 });

  const key = await pool.query<{ def: string }>(
    "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'resource_pkey'",
  );
  expect(key.rows[0].def).toBe('PRIMARY KEY (resource_type, id)');
  const again = await insert('Patient', 'dup', p2).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(pgErrorCode(again)).toBe(PG_UNIQUE_VIOLATION);
  // A platform type too, now through the same key (0202 dropped 0201's indexes of its own).
  await insert('User', 'u1', p1);
  expect(pgErrorCode(await insert('User', 'u1', p2).catch((err: unknown) => err))).toBe(PG_UNIQUE_VIOLATION);
});
