import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { readManyByReference } from './store.js';

let db: TestDatabase;
let pool: pg.Pool;
const project = randomUUID();

async function insert(type: string, id: string, deleted = false): Promise<void> {
  await pool.query(
    `INSERT INTO "${type}" (resource_type, id, project_id, version_id, last_updated, deleted, content)
     VALUES ($1, $2, $3, 1, now(), $4, $5)`,
    [type, id, project, deleted, deleted ? '' : JSON.stringify({ resourceType: type, id })],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await insert('Project', 'p1');
  await insert('User', 'u1');
  await insert('AccessPolicy', 'a1');
  await insert('AccessPolicy', 'a2');
  await insert('AccessPolicy', 'gone', true);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('readManyByReference', () => {
  it('reads references of several types in one statement, leaving out missing, deleted and malformed ones', async () => {
    let statements = 0;
    const counting = {
      query: (...args: Parameters<pg.Pool['query']>) => {
        statements++;
        return (pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as pg.Pool;
    const found = await readManyByReference(counting, [
      'Project/p1',
      'User/u1',
      'AccessPolicy/a1',
      'AccessPolicy/a2',
      'AccessPolicy/gone',
      'AccessPolicy/missing',
      'NotAType/x',
      'Project',
      undefined,
    ]);
    expect([...found.keys()].sort()).toEqual(['AccessPolicy/a1', 'AccessPolicy/a2', 'Project/p1', 'User/u1']);
    expect(found.get('User/u1')).toEqual({ resourceType: 'User', id: 'u1' });
    expect(statements).toBe(1);
  });

  it('answers an empty map without a query when no reference is usable', async () => {
    expect((await readManyByReference(pool, [undefined, 'bad'])).size).toBe(0);
  });
});
