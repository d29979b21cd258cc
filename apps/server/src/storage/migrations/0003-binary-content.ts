import type { Migration } from './types.js';

/**
 * Binary content in the database (storage/postgres-binary-store.ts), shared by every process: one
 * row per content key and its bytes in chunks of about 1 MB, written in one transaction. The
 * chunk's key references the content row, which is inserted last, so the check is deferred to commit.
 */
export const m0003BinaryContent: Migration = {
  id: 3,
  name: 'storage: Binary content in chunks',
  async up(client) {
    await client.query(`
      CREATE TABLE binary_content (
        key uuid PRIMARY KEY,
        size bigint NOT NULL,
        chunks integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await client.query(`
      CREATE TABLE binary_content_chunk (
        key uuid NOT NULL REFERENCES binary_content (key) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        seq integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (key, seq)
      )`);
  },
};
