import { describe, expect, it } from 'vitest';
import { memoryFlags, WAL_FLAGS } from './embedded-postgres.js';

const GB = 1024 * 1024 * 1024;

describe('memoryFlags: the embedded PostgreSQL caches a share of the machine', () => {
  it('an eighth of memory for shared buffers, half for the planner', () => {
    expect(memoryFlags(8 * GB)).toEqual(['-c', 'shared_buffers=1024MB', '-c', 'effective_cache_size=4096MB']);
  });
  it('never less than PostgreSQL’s default, never more than 2 GB', () => {
    expect(memoryFlags(0.5 * GB)[1]).toBe('shared_buffers=128MB');
    expect(memoryFlags(64 * GB)[1]).toBe('shared_buffers=2048MB');
    expect(memoryFlags(0.5 * GB)[3]).toBe('effective_cache_size=256MB');
  });
});

describe('WAL_FLAGS: the embedded PostgreSQL compresses full-page images, durability untouched', () => {
  it('turns on wal_compression and never fsync, full_page_writes or synchronous_commit off', () => {
    expect(WAL_FLAGS).toContain('wal_compression=pglz');
    expect(WAL_FLAGS.join(' ')).not.toMatch(/fsync|full_page_writes|synchronous_commit/);
  });
});
