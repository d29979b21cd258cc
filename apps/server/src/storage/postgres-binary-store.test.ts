import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperationOutcomeError } from '@hearth/core';
import { createPool, type Pool } from '../platform/postgres.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { PostgresBinaryStore } from './postgres-binary-store.js';

const CHUNK = 1000;
let db: TestDatabase;
let pool: Pool;
let otherPool: Pool;
let store: PostgresBinaryStore;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool({ connectionString: db.url, max: 4, statementTimeoutMs: 30000 });
  otherPool = createPool({ connectionString: db.url, max: 2, statementTimeoutMs: 30000 });
  // Small chunks, so that a few KB make several rows.
  store = new PostgresBinaryStore(pool, 10_000, CHUNK);
});
afterAll(async () => {
  await pool?.end();
  await otherPool?.end();
  await db?.drop();
});

/** Pieces of the given sizes, each filled with its own byte. */
function pieces(...sizes: number[]): Readable {
  return Readable.from(sizes.map((size, i) => Buffer.alloc(size, i + 1)));
}

async function rowsOf(key: string): Promise<{ contents: number; chunks: number[] }> {
  const contents = await pool.query('SELECT 1 FROM binary_content WHERE key = $1', [key]);
  const chunks = await pool.query<{ len: number }>(
    'SELECT length(data) AS len FROM binary_content_chunk WHERE key = $1 ORDER BY seq',
    [key],
  );
  return { contents: contents.rowCount ?? 0, chunks: chunks.rows.map((r) => r.len) };
}

async function totalRows(): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT (SELECT count(*) FROM binary_content)::int + (SELECT count(*) FROM binary_content_chunk)::int AS n',
  );
  return rows[0].n;
}

/** Every connection the store took is back in the pool. */
function connectionsReturned(): boolean {
  return pool.totalCount === pool.idleCount && pool.waitingCount === 0;
}

describe('PostgresBinaryStore', () => {
  it('writes a stream in chunk rows under a new key and reads the same bytes back, chunk by chunk', async () => {
    const expected = Buffer.concat([Buffer.alloc(700, 1), Buffer.alloc(1500, 2), Buffer.alloc(300, 3)]);
    const { key, size } = await store.write(pieces(700, 1500, 300));
    expect(size).toBe(2500);
    expect(await rowsOf(key)).toEqual({ contents: 1, chunks: [1000, 1000, 500] });

    const { stream, size: stored } = await store.open(key);
    expect(stored).toBe(2500);
    const parts = (await stream.toArray()) as Buffer[];
    expect(parts.map((p) => p.length)).toEqual([1000, 1000, 500]);
    expect(Buffer.concat(parts).equals(expected)).toBe(true);
    expect(connectionsReturned()).toBe(true);
  });

  it('stores a Buffer and empty content', async () => {
    const bytes = Buffer.from('hello binary');
    const { key } = await store.write(bytes);
    expect(Buffer.concat(await (await store.open(key)).stream.toArray()).equals(bytes)).toBe(true);

    const empty = await store.write(Buffer.alloc(0));
    expect(empty.size).toBe(0);
    const opened = await store.open(empty.key);
    expect(opened.size).toBe(0);
    expect(await opened.stream.toArray()).toEqual([]);
  });

  it('gives every write its own key: content is immutable', async () => {
    const a = await store.write(Buffer.from('version one'));
    const b = await store.write(Buffer.from('version two'));
    expect(a.key).not.toBe(b.key);
    expect(Buffer.concat(await (await store.open(a.key)).stream.toArray()).toString()).toBe('version one');
  });

  it('is read by any process on the database', async () => {
    const { key } = await store.write(pieces(2500));
    const elsewhere = new PostgresBinaryStore(otherPool, 10_000);
    const { stream, size } = await elsewhere.open(key);
    expect(size).toBe(2500);
    expect(Buffer.concat(await stream.toArray()).equals(Buffer.alloc(2500, 1))).toBe(true);
  });

  it('stops a stream over the limit with a 413 and leaves no rows behind', async () => {
    const before = await totalRows();
    // Several chunks are inserted before the limit is passed: the rollback takes them back.
    const source = pieces(...Array.from({ length: 20 }, () => 1000));
    const err = await store.write(source).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    expect((err as OperationOutcomeError).status).toBe(413);
    expect((err as OperationOutcomeError).message).toContain('10000 bytes');
    expect(await totalRows()).toBe(before);
    expect(connectionsReturned()).toBe(true);
  });

  it('leaves nothing behind when the source fails mid-way', async () => {
    const before = await totalRows();
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(2500, 7);
        throw new Error('client went away');
      })(),
    );
    await expect(store.write(failing)).rejects.toThrow('client went away');
    expect(await totalRows()).toBe(before);
    expect(connectionsReturned()).toBe(true);
  });

  it('removes content with its chunks', async () => {
    const { key } = await store.write(pieces(2500));
    await store.remove(key);
    expect(await rowsOf(key)).toEqual({ contents: 0, chunks: [] });
    const gone = await store.open(key).catch((e: unknown) => e);
    expect((gone as OperationOutcomeError).status).toBe(404);
  });

  it('answers 404 for missing content and refuses keys that are not UUIDs', async () => {
    const missing = await store.open('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect((missing as OperationOutcomeError).status).toBe(404);
    await expect(store.open('../../etc/passwd')).rejects.toThrow('Invalid binary storage key');
  });
});
