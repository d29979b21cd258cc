// The pool against a real PostgreSQL when connections are lost: nothing crashes the process, the
// loss is reported as a connection error, and writes that must not be dropped are retried.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { createPool, isConnectionError, retryWhileUnreachable, type Pool } from './postgres.js';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool({ connectionString: db.url, max: 4, statementTimeoutMs: 10_000, acquireTimeoutMs: 1000 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('the PostgreSQL pool', () => {
  it('survives the loss of a connection held between two statements, and reports it to its holder', async () => {
    const client = await pool.connect();
    await client.query('BEGIN');
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // PostgreSQL ends the connection while no statement runs on it: node-postgres emits 'error' on
    // the client, which without a listener is an uncaught exception (the process exits).
    await pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const err = await client.query('SELECT 1').catch((e: unknown) => e);
    expect(isConnectionError(err)).toBe(true);
    client.release();
    // The broken connection was discarded: the pool serves on.
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
  });

  it('fails a caller that cannot get a connection within the acquire timeout', async () => {
    const held = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
    try {
      const started = Date.now();
      const err = await pool.query('SELECT 1').catch((e: unknown) => e);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(isConnectionError(err)).toBe(true);
    } finally {
      held.forEach((c) => c.release());
    }
  });

  it('retries a statement while the database is unreachable, and not on other errors', async () => {
    let calls = 0;
    const lost = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const result = await retryWhileUnreachable(
      async () => {
        calls++;
        if (calls < 3) {
          throw lost;
        }
        return 'written';
      },
      () => false,
    );
    expect([result, calls]).toEqual(['written', 3]);

    calls = 0;
    const wrong = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(
      retryWhileUnreachable(
        () => Promise.reject(wrong).finally(() => calls++),
        () => false,
      ),
    ).rejects.toBe(wrong);
    expect(calls).toBe(1);
    await expect(
      retryWhileUnreachable(
        () => Promise.reject(lost),
        () => true,
      ),
    ).rejects.toBe(lost);
  });
});
