import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { Repository } from '../../storage/repository.js';
import { makePatientTransaction, prng } from '../../../../../tools/bench/data.js';
import { benchmarkSearches, expectIndexedPlans, pageByNextLinks } from './plans.js';

let t: TestApp;
/** SEARCH_EXPLAIN_PATIENTS=2000 seeds the benchmark's size and also forbids whole-table reads of index tables. */
const PATIENTS = Number(process.env.SEARCH_EXPLAIN_PATIENTS ?? 200);
const AT_SCALE = PATIENTS >= 2000;
let patientIds: string[] = [];

/** The bench's data set (tools/bench/data.ts), written straight through the repository and indexer. */
async function seed(): Promise<void> {
  const projectId = t.testProject.projectId;
  const repo = new Repository(t.services.repositoryDeps, { projectId, readProjects: [projectId], system: true });
  for (let i = 0; i < PATIENTS; i++) {
    const bundle = makePatientTransaction(prng(1000 + i), i, 31, 25) as {
      entry: { fullUrl: string; resource: Record<string, unknown> }[];
    };
    const ids = new Map(bundle.entry.map((e) => [e.fullUrl, `${e.resource.resourceType}/${randomUUID()}`]));
    const resolved = JSON.stringify(
      bundle.entry.map((e) => ({ ...e.resource, id: ids.get(e.fullUrl)!.split('/')[1] })),
    ).replace(/urn:uuid:[0-9a-f-]{36}/g, (u) => ids.get(u)!);
    const resources = JSON.parse(resolved) as { resourceType: string; id: string }[];
    patientIds.push(resources[0].id);
    await repo.createMany(resources);
  }
  await t.pool.query('ANALYZE');
}

beforeAll(async () => {
  t = await createTestApp();
  patientIds = [];
  await seed();
}, 1_800_000);
afterAll(async () => {
  await t?.close();
});

/** The resource tables: a plan must never read them whole. */
const RESOURCES = AT_SCALE
  ? /^(Patient|Observation|Encounter|Condition|search_\w+)$/
  : /^(Patient|Observation|Encounter|Condition)$/;

it('reaches every growing table of the benchmark queries through an index', { timeout: 120_000 }, async () => {
  const code = encodeURIComponent('http://loinc.org|8867-4');
  const urls = benchmarkSearches(patientIds[7]);
  // A deep page, reached by next links.
  const next = await pageByNextLinks(t, `Observation?code=${code}&_count=20`, 11);
  expect(next).toBeDefined();
  urls.push(next!);
  for (const url of urls) {
    await expectIndexedPlans(t, url, RESOURCES);
  }
});
