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

  it('stores rows that span the pieces it sends, whatever text falls on their edges', async () => {
    // Fields of every UTF-8 width, some larger than a piece (256 kB), so that pieces end inside
    // rows, between fields and next to multi-byte characters.
    const unit = ['a', '\t', 'é', '中', '😀', '\\'];
    const rows = Array.from({ length: 40 }, (_, i) => {
      const size = i % 7 === 0 ? 300_000 : 1 + ((i * 7919) % 40_000);
      const t = Array.from({ length: size }, (_, k) => unit[(k + i) % unit.length]).join('');
      return [t, i, Buffer.from([i]), [[...t].slice(0, 10).join('')]];
    });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await copyRows(client, 'copy_probe', ['t', 'n', 'b', 'a'], rows);
      const stored = await client.query<{ t: string; n: number; b: Buffer; a: string[] }>(
        'SELECT t, n::int AS n, b, a FROM copy_probe ORDER BY n',
      );
      await client.query('ROLLBACK');
      expect(stored.rows.length).toBe(rows.length);
      stored.rows.forEach((row, i) => expect(row).toEqual({ t: rows[i][0], n: i, b: rows[i][2], a: rows[i][3] }));
    } finally {
      client.release();
    }
  });
});
