import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { Repository } from '../../storage/repository.js';
import { makePatientTransaction, prng } from '../../../../../tools/bench/data.js';
import { auth } from './helpers.js';

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

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function scans(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (node['Relation Name']) out.push(node);
  node.Plans?.forEach((p) => scans(p, out));
  return out;
}

/** The resource tables: a plan must never read them whole. */
const RESOURCES = AT_SCALE
  ? /^(Patient|Observation|Encounter|Condition|search_\w+)$/
  : /^(Patient|Observation|Encounter|Condition)$/;
const INDEXED = /Index|Bitmap/;

async function plansOf(url: string): Promise<{ sql: string; nodes: PlanNode[] }[]> {
  const captured: { text: string; values: unknown[] }[] = [];
  const pool = t.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const original = pool.query.bind(pool);
  pool.query = (text: unknown, values?: unknown) => {
    // Prepared statements come as { name, text, values }.
    const q = typeof text === 'object' && text ? (text as { text: string; values: unknown[] }) : { text, values };
    // Search statements only (the job queue shares the pool): they read a search_ or a type's table.
    if (typeof q.text === 'string' && /^\s*(SELECT|WITH)/.test(q.text) && /search_|FROM "/.test(q.text)) {
      captured.push({ text: q.text, values: q.values as unknown[] });
    }
    return original(text, values);
  };
  try {
    const res = await t.app.inject({ url: `/fhir/R4/${url}`, headers: auth(t) });
    expect(res.statusCode, res.body).toBe(200);
  } finally {
    pool.query = original;
  }
  const out = [];
  for (const c of captured) {
    const result = (await original(`EXPLAIN (FORMAT JSON) ${c.text}`, c.values)) as {
      rows: { 'QUERY PLAN': [{ Plan: PlanNode }] }[];
    };
    out.push({ sql: c.text, nodes: scans(result.rows[0]['QUERY PLAN'][0].Plan) });
  }
  return out;
}

it('reaches every growing table of the benchmark queries through an index', { timeout: 120_000 }, async () => {
  const code = encodeURIComponent('http://loinc.org|8867-4');
  const urls = [
    'Patient?name=Smi',
    `Patient?identifier=${encodeURIComponent('http://hearth.example/mrn|MRN-42')}`,
    `Observation?subject=Patient/${patientIds[7]}&code=${code}`,
    `Observation?code=${code}&date=ge2020&_sort=-date&_count=20`,
    `Observation?code=${code}&date=ge2020&_sort=-date&_count=20&_include=Observation:subject`,
    `Patient?_has:Observation:subject:code=${code}`,
    'Observation?subject.name=Smi',
  ];
  // A deep page, reached by next links.
  let next: string | undefined = `Observation?code=${code}&_count=20`;
  for (let i = 0; i < 10 && next; i++) {
    const res: { json(): unknown } = await t.app.inject({ url: `/fhir/R4/${next}`, headers: auth(t) });
    const link: { url: string } | undefined = (res.json() as { link?: { relation: string; url: string }[] }).link?.find(
      (l) => l.relation === 'next',
    );
    next = link ? link.url.slice(link.url.indexOf('/fhir/R4/') + 9) : undefined;
  }
  expect(next).toBeDefined();
  urls.push(next!);
  for (const url of urls) {
    const plans = await plansOf(url);
    expect(plans.length, url).toBeGreaterThan(0);
    for (const plan of plans) {
      const shape = plan.nodes.map((n) => `${n['Node Type']} ${n['Relation Name']}`);
      // Every statement uses an index, and none reads a resource table whole. (On this small
      // data set the planner may still hash a few thousand index rows; at benchmark scale the
      // same statements run as ordered index scans.)
      expect(
        shape.some((s) => INDEXED.test(s)),
        `${url}: ${shape.join(', ')}`,
      ).toBe(true);
      const seq = plan.nodes.filter((n) => n['Node Type'] === 'Seq Scan' && RESOURCES.test(n['Relation Name'] ?? ''));
      expect(
        seq.map((n) => n['Relation Name']),
        `${url}\n${plan.sql}`,
      ).toEqual([]);
    }
  }
});
