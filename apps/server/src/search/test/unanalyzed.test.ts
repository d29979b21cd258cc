import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { tableStats, waitForValue } from '../../test/table-stats.js';
import { BASE_THRESHOLD } from '../../storage/auto-analyze.js';
import { makePatientTransaction, prng } from '../../../../../tools/bench/data.js';
import { benchmarkSearches, expectIndexedPlans, pageByNextLinks, plansOf } from './plans.js';

describe('a server on never-analyzed tables', () => {
  let t: TestApp;
  /** The tables the benchmark's searches read, all grown by the load. */
  const GROWN = [
    'Patient',
    'Observation',
    'Encounter',
    'search_token',
    'search_reference',
    'search_string',
    'search_date',
  ];

  beforeAll(async () => {
    // A fresh clone of the template: its tables have never been analyzed. Autovacuum stays away from
    // them whatever the test server's settings, as it would on a server with autovacuum off.
    t = await createTestApp();
    for (const table of GROWN) {
      await t.pool.query(`ALTER TABLE "${table}" SET (autovacuum_enabled = false)`);
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it(
    'analyzes the tables a load of transactions grew, so subject+code probes the subject rows instead of merging every row of the code',
    { timeout: 600_000 },
    async () => {
      // Observation has never been analyzed; the index tables hold the template's terminology rows,
      // which the server may have analyzed since it started: they must be analyzed again after the load.
      const observation = await tableStats(t.pool, 'Observation');
      expect(observation.analyzed + observation.autoanalyzed).toBe(0);
      expect(observation.reltuples).toBe(-1);
      const before = new Map<string, number>();
      for (const table of GROWN) {
        before.set(table, (await tableStats(t.pool, table)).analyzed);
      }
      // The benchmark's data (tools/bench/data.ts), 200 patients with 25 observations each, through
      // transaction Bundles: 500 Observations share each code, a patient has 25.
      let patientId = '';
      for (let i = 0; i < 200; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/fhir/R4/',
          headers: { ...t.authHeaders, 'content-type': 'application/fhir+json', prefer: 'return=minimal' },
          payload: makePatientTransaction(prng(1000 + i), i, 31, 25),
        });
        expect(res.statusCode, res.body).toBe(200);
        if (i === 7) {
          patientId = (res.json() as { entry: { response: { location: string } }[] }).entry[0].response.location.split(
            '/',
          )[1];
        }
      }
      // The server's own check, against PostgreSQL's counters: nobody else runs ANALYZE here.
      for (const table of GROWN) {
        await waitForValue(
          `the server to analyze ${table}`,
          () => tableStats(t.pool, table),
          (s) =>
            s.analyzed > before.get(table)! &&
            s.reltuples > 0 &&
            Math.abs(s.live - s.reltuples) <= BASE_THRESHOLD + 0.1 * s.reltuples,
        );
      }
      // Without statistics the code's rows were read whole through search_token_value_idx and
      // merged with the subject's (Merge Semi Join); with them, each of the subject's rows is probed.
      const code = encodeURIComponent('http://loinc.org|8867-4');
      const plans = await plansOf(t, `Observation?subject=Patient/${patientId}&code=${code}`);
      // The statement that reads the page's matches (the session's own reads are captured too).
      const matches = plans.filter((p) => p.sql.includes('FROM "Observation" r'));
      expect(matches).toHaveLength(1);
      const shape = JSON.stringify(matches[0].plan, null, 1);
      const index = (table: string) =>
        matches[0].nodes.filter((n) => n['Relation Name'] === table).map((n) => n['Index Name']);
      expect(index('search_reference'), shape).toEqual(['search_reference_target_idx']);
      expect(index('search_token'), shape).toEqual(['search_token_resource_idx']);
      expect(shape).not.toContain('Merge');
      // And every benchmark search, as explain.test.ts checks them after an ANALYZE: through indexes,
      // no resource table read whole.
      const urls = benchmarkSearches(patientId);
      const deep = await pageByNextLinks(t, `Observation?code=${code}&_count=20`, 11);
      expect(deep).toBeDefined();
      urls.push(deep!);
      for (const url of urls) {
        await expectIndexedPlans(t, url, /^(Patient|Observation|Encounter|Condition)$/);
      }
    },
  );
});
