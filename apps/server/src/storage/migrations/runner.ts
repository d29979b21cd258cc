import type { Pool, PoolClient } from '../../platform/postgres.js';
import type { Logger } from '../../platform/logger.js';
import { migrations } from './index.js';
import type { Migration } from './types.js';

/** Any constant will do, as long as every Hearth process uses the same one. */
const MIGRATION_LOCK_KEY = 7_246_013_001;

export interface MigrationOptions {
  /**
   * Stop after the migration with this id: the database is left as a release that ended there
   * wrote it (upgrade tests). The id must be one of the list's.
   */
  upTo?: number;
}

/**
 * Applies pending migrations in order, each in its own transaction, under a session advisory
 * lock so that several server processes starting at once against one database take turns.
 * Forward only: an applied migration is never changed or undone.
 */
export async function runMigrations(
  pool: Pool,
  logger?: Logger,
  list: Migration[] = migrations,
  options: MigrationOptions = {},
): Promise<number> {
  const { upTo } = options;
  if (upTo !== undefined && !list.some((m) => m.id === upTo)) {
    throw new Error(`runMigrations: no migration has id ${upTo}`);
  }
  const client = await pool.connect();
  try {
    // Migrations may take longer than the request statement timeout.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS hearth_migration (
        id integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const applied = new Set(
        (await client.query<{ id: number }>('SELECT id FROM hearth_migration')).rows.map((r) => r.id),
      );
      let count = 0;
      for (const migration of [...list].sort((a, b) => a.id - b.id)) {
        if (upTo !== undefined && migration.id > upTo) {
          break;
        }
        if (applied.has(migration.id)) {
          continue;
        }
        logger?.info({ migration: migration.id, name: migration.name }, 'applying migration');
        await applyOne(client, migration);
        count++;
      }
      return count;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}

async function applyOne(client: PoolClient, migration: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    await migration.up(client);
    await client.query('INSERT INTO hearth_migration (id, name) VALUES ($1, $2)', [migration.id, migration.name]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}
