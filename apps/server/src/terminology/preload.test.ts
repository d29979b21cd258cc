import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createPool } from '../platform/postgres.js';
import { runMigrations } from '../storage/migrations/runner.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { preloadTerminology } from './preload.js';

let t: TestApp | undefined;
let bare: TestDatabase | undefined;
afterAll(async () => {
  await t?.close();
  await bare?.drop(); // given to createTestApp, so not dropped by it
});

/**
 * A migrated database without the terminology. Test databases are clones of the run's template,
 * which global-setup preloads, so this one is created and migrated here.
 */
async function createBareDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const run = inject('pgTemplate').replace(/^hearth_tpl_/, '');
  const name = `hearth_t_${run}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = createPool({ connectionString: url.toString(), max: 2, statementTimeoutMs: 0 });
  try {
    await runMigrations(pool);
  } finally {
    await pool.end();
  }
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

const countTerminology = async (pool: pg.Pool, projectId: string): Promise<number> =>
  (
    await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM resource WHERE project_id = $1 AND resource_type IN ('CodeSystem', 'ValueSet', 'ConceptMap')`,
      [projectId],
    )
  ).rows[0].n;

describe('preloadTerminology', () => {
  it('the test template is preloaded: a clone has the terminology before any server starts', async () => {
    const clone = await createTestDatabase();
    const pool = createPool({ connectionString: clone.url, max: 1, statementTimeoutMs: 0 });
    try {
      const result = await preloadTerminology(pool);
      expect(result.loaded).toBe(false);
      expect(await countTerminology(pool, result.projectId)).toBeGreaterThan(2399);
    } finally {
      await pool.end();
      await clone.drop();
    }
  });

  it('loads a database once under concurrent starts, ahead of a server which then starts without loading', async () => {
    bare = await createBareDatabase();
    // Two servers starting at once on one database: one loads, the other waits and finds it done.
    const pools = [0, 1].map(() => createPool({ connectionString: bare!.url, max: 2, statementTimeoutMs: 0 }));
    let projectId: string;
    try {
      const results = await Promise.all(pools.map((pool) => preloadTerminology(pool)));
      projectId = results[0].projectId;
      expect(results[1].projectId).toBe(projectId);
      const loaders = results.filter((r) => r.loaded);
      expect(loaders).toHaveLength(1);
      console.log(`R4 terminology preloaded in ${loaders[0].ms} ms`);
      expect(await countTerminology(pools[0], projectId)).toBe(loaders[0].resources);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
    t = await createTestApp({ db: bare });
    expect(t.services.terminology.projectId).toBe(projectId);
    const res = await t.app.inject({
      headers: t.authHeaders,
      url: '/fhir/R4/ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/administrative-gender',
    });
    expect(res.json().expansion.total).toBe(4);
  });
});
