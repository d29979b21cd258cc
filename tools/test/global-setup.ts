import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { runMigrations } from '../../apps/server/src/storage/migrations/runner.js';
import { preloadTerminology } from '../../apps/server/src/terminology/preload.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../apps/server/src/platform/embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of a database on the test server with rights to CREATE DATABASE. */
    pgAdminUrl: string;
    /** Name of a migrated database to clone with CREATE DATABASE ... TEMPLATE. */
    pgTemplate: string;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * Finds a real PostgreSQL for the tests: HEARTH_TEST_DATABASE_URL, else the machine's server on
 * 127.0.0.1:5432, else an embedded one under .hearth-test/. Builds one migrated template database
 * with the R4 terminology loaded; each test file clones it (fast) so tests never share data, and
 * no test file pays the terminology load (~4 s of CPU) at its server's start.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let embedded: EmbeddedDatabase | undefined;
  let adminUrl = process.env.HEARTH_TEST_DATABASE_URL ?? '';
  if (!adminUrl) {
    const local = 'postgres://postgres@127.0.0.1:5432/postgres';
    if (await canConnect(local)) {
      adminUrl = local;
    } else {
      console.log('No PostgreSQL on 127.0.0.1:5432: starting an embedded PostgreSQL for the tests');
      embedded = await startEmbeddedPostgres(resolve('.hearth-test'), Number(process.env.HEARTH_TEST_PG_PORT ?? 5434));
      adminUrl = withDatabase(embedded.connectionString, 'postgres');
    }
  }
  const template = `hearth_tpl_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const pool = new pg.Pool({ connectionString: withDatabase(adminUrl, template), max: 2 });
  try {
    await runMigrations(pool);
    await preloadTerminology(pool);
  } finally {
    await pool.end();
  }
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);

  return async () => {
    // Drop the template and any test database of this run a crashed worker left behind (only this
    // run's: other runs may share the server).
    const leftovers = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $2 OR datname = $1`,
      [template, `hearth\\_t\\_${template.replace(/^hearth_tpl_/, '')}\\_%`],
    );
    for (const { datname } of leftovers.rows) {
      await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
    }
    await admin.end();
    await embedded?.stop();
  };
}
