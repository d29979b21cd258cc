import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pg from 'pg';
import { copyRows, copyText } from './postgres-copy.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';

describe('copyText', () => {
  it('escapes what would end a field or a row early', () => {
    expect(copyText([['a\tb', 'c\nd\\e', null, 7]])).toBe('a\\tb\tc\\nd\\\\e\t\\N\t7\n');
  });

  it('quotes array elements so commas, braces and quotes stay inside them', () => {
    expect(copyText([[['Patient/1', 'a,"b}']]])).toBe('{"Patient/1","a,\\\\"b}"}\n');
  });
});

describe('copyRows against PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    await pool.query('CREATE TABLE copy_probe (t text, n bigint, b bytea, a text[])');
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it('stores any text, bytes and list exactly as given', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/\0/g, ''));
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.uint8Array({ maxLength: 16 }),
        fc.array(text, { maxLength: 4 }),
        async (t, bytes, list) => {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            await copyRows(client, 'copy_probe', ['t', 'n', 'b', 'a'], [[t, 42, Buffer.from(bytes), list]]);
            const row = await client.query<{ t: string; n: number; b: Buffer; a: string[] }>(
              'SELECT t, n::int AS n, b, a FROM copy_probe',
            );
            await client.query('ROLLBACK');
            expect(row.rows).toEqual([{ t, n: 42, b: Buffer.from(bytes), a: list }]);
          } finally {
            client.release();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
