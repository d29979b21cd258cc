import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config/load.js';
import { createBinaryStore } from './services.js';
import { FileBinaryStore } from './storage/file-binary-store.js';
import { PostgresBinaryStore } from './storage/postgres-binary-store.js';

// Never connects: the stores take connections only when content is written or read.
const pool = new pg.Pool({ connectionString: 'postgres://unused@127.0.0.1:1/unused' });
afterAll(() => pool.end());

describe('createBinaryStore', () => {
  it('keeps Binary content in PostgreSQL unless HEARTH_BINARY_STORAGE says files', () => {
    expect(createBinaryStore(loadConfig({}), pool)).toBeInstanceOf(PostgresBinaryStore);
    const files = createBinaryStore(loadConfig({ HEARTH_BINARY_STORAGE: 'files' }), pool);
    expect(files).toBeInstanceOf(FileBinaryStore);
    expect(files.maxBytes).toBe(256 * 1024 * 1024);
  });

  it('refuses to start with a store it does not know, naming the setting', () => {
    expect(() => createBinaryStore(loadConfig({ HEARTH_BINARY_STORAGE: 's3' }), pool)).toThrow(
      '(HEARTH_BINARY_STORAGE) must be postgres or files, got "s3"',
    );
  });
});
