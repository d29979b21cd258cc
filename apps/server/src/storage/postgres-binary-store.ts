import { randomUUID } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fail, isUUID, notFoundWith } from '@hearth/core';
import type { Pool, PoolClient } from '../platform/postgres.js';
import { discardRest, sizeLimit, type BinaryStore, type StoredContent } from './binary-store.js';

/** Content is stored in rows of this many bytes: big enough to be few, small enough to stream. */
export const BINARY_CHUNK_BYTES = 1024 * 1024;

/**
 * Binary content in PostgreSQL (migration 0003), so that every process on the database shares it
 * without a shared volume: a binary_content row (key, size, chunk count) and binary_content_chunk
 * rows of up to BINARY_CHUNK_BYTES each. A write is one transaction, so a reader never sees partial
 * content and a failed or oversized write leaves nothing behind. A read fetches one chunk at a time
 * as the client takes them, so memory stays at about a chunk and no connection is held meanwhile.
 */
export class PostgresBinaryStore implements BinaryStore {
  constructor(
    private readonly pool: Pool,
    readonly maxBytes: number,
    private readonly chunkBytes = BINARY_CHUNK_BYTES,
  ) {}

  async write(source: Readable | Buffer): Promise<StoredContent> {
    const key = randomUUID();
    const input = Buffer.isBuffer(source) ? Readable.from([source]) : source;
    const sink = new ChunkWriter(this.pool, key, this.chunkBytes);
    try {
      await pipeline(input, sizeLimit(this.maxBytes), sink);
      return { key, size: sink.size };
    } catch (err) {
      await sink.abort();
      discardRest(source);
      throw err;
    }
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    assertKey(key);
    const { rows } = await this.pool.query<{ size: string; chunks: number }>(
      'SELECT size, chunks FROM binary_content WHERE key = $1',
      [key],
    );
    if (!rows[0]) {
      fail(notFoundWith('The content of this Binary is not available'));
    }
    const { chunks } = rows[0];
    const pool = this.pool;
    const stream = Readable.from(
      (async function* () {
        for (let seq = 0; seq < chunks; seq++) {
          const chunk = await pool.query<{ data: Buffer }>(
            'SELECT data FROM binary_content_chunk WHERE key = $1 AND seq = $2',
            [key, seq],
          );
          if (!chunk.rows[0]) {
            throw new Error(`Binary content ${key} lacks chunk ${seq}`);
          }
          yield chunk.rows[0].data;
        }
      })(),
      { objectMode: false },
    );
    return { stream, size: Number(rows[0].size) };
  }

  async remove(key: string): Promise<void> {
    assertKey(key);
    // The chunks go with it (ON DELETE CASCADE).
    await this.pool.query('DELETE FROM binary_content WHERE key = $1', [key]);
  }
}

function assertKey(key: string): void {
  if (!isUUID(key)) {
    throw new Error(`Invalid binary storage key: ${key}`);
  }
}

/**
 * Gathers incoming bytes into chunks and inserts each inside one transaction, committed when the
 * input ends. The connection is taken only once a first full chunk is there, so content smaller
 * than a chunk (most of it) holds none while its sender is still sending.
 */
class ChunkWriter extends Writable {
  size = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  private client: PoolClient | undefined;
  /** The chunk insert or commit under way, awaited before a rollback. */
  private work: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly key: string,
    private readonly chunkBytes: number,
  ) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.size += chunk.length;
    if (this.pendingBytes < this.chunkBytes) {
      done();
      return;
    }
    this.work = this.flush(false);
    this.work.then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.work = this.finish();
    this.work.then(() => done(), done);
  }

  private async flush(all: boolean): Promise<void> {
    while (this.pendingBytes >= this.chunkBytes || (all && this.pendingBytes > 0)) {
      const joined = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
      const take = Math.min(this.chunkBytes, joined.length);
      const rest = joined.subarray(take);
      this.pending = rest.length ? [rest] : [];
      this.pendingBytes = rest.length;
      const client = await this.transaction();
      await client.query('INSERT INTO binary_content_chunk (key, seq, data) VALUES ($1, $2, $3)', [
        this.key,
        this.seq++,
        joined.subarray(0, take),
      ]);
    }
  }

  private async finish(): Promise<void> {
    await this.flush(true);
    const client = await this.transaction();
    await client.query('INSERT INTO binary_content (key, size, chunks) VALUES ($1, $2, $3)', [
      this.key,
      this.size,
      this.seq,
    ]);
    await client.query('COMMIT');
    this.release();
  }

  private async transaction(): Promise<PoolClient> {
    if (!this.client) {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      this.client = client;
    }
    return this.client;
  }

  /** Rolls back whatever was written. */
  async abort(): Promise<void> {
    await this.work.catch(() => undefined);
    const client = this.client;
    if (!client) {
      return;
    }
    this.client = undefined;
    try {
      await client.query('ROLLBACK');
      client.release();
    } catch (err) {
      client.release(err as Error);
    }
  }

  private release(): void {
    this.client?.release();
    this.client = undefined;
  }
}
