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
  it('loads a database ahead of the server, which then starts without loading', async () => {
    db = await createTestDatabase();
    const pool = createPool({ connectionString: db.url, max: 2, statementTimeoutMs: 0 });
    let projectId: string;
    try {
      const first = await preloadTerminology(pool);
      projectId = first.projectId;
      // Unless the run's template was preloaded already (then this clone has it too).
      if (first.loaded) {
        expect(first.resources).toBe(2399);
        console.log(`R4 terminology preloaded in ${first.ms} ms`);
      }
    } finally {
      await pool.end();
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
