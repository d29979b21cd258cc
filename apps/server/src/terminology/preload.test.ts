import { afterAll, describe, expect, it } from 'vitest';
import { createPool } from '../platform/postgres.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { preloadTerminology } from './preload.js';

let t: TestApp | undefined;
let db: TestDatabase | undefined;
afterAll(async () => {
  await t?.close();
  await db?.drop(); // given to createTestApp, so not dropped by it
});

describe('preloadTerminology', () => {
  it('loads a database once under concurrent starts, ahead of a server which then starts without loading', async () => {
    db = await createTestDatabase();
    // Two servers starting at once on one database: one loads, the other waits and finds it done.
    const pools = [0, 1].map(() => createPool({ connectionString: db!.url, max: 2, statementTimeoutMs: 0 }));
    let projectId: string;
    try {
      const results = await Promise.all(pools.map((pool) => preloadTerminology(pool)));
      projectId = results[0].projectId;
      expect(results[1].projectId).toBe(projectId);
      // Unless the run's template was preloaded already (then this clone has it and neither loads).
      const loaders = results.filter((r) => r.loaded);
      expect(loaders.length).toBeLessThanOrEqual(1);
      if (loaders.length === 1) {
        expect(loaders[0].resources).toBe(2399);
        console.log(`R4 terminology preloaded in ${loaders[0].ms} ms`);
      }
      const count = await pools[0].query(
        `SELECT count(*)::int AS n FROM resource WHERE project_id = $1 AND resource_type IN ('CodeSystem', 'ValueSet', 'ConceptMap')`,
        [projectId],
      );
      expect(count.rows[0].n).toBe(2399);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
    t = await createTestApp({ db });
    expect(t.services.terminology.projectId).toBe(projectId);
    const res = await t.app.inject({
      headers: t.authHeaders,
      url: '/fhir/R4/ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/administrative-gender',
    });
    expect(res.json().expansion.total).toBe(4);
  });
});
