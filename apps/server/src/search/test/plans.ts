import { expect } from 'vitest';
import type { TestApp } from '../../test/app.js';
import { auth } from './helpers.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The plan's nodes that read a relation, depth first. */
export function scans(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (node['Relation Name']) out.push(node);
  node.Plans?.forEach((p) => scans(p, out));
  return out;
}

/** A read of the sign-in state (memberships, logins, projects, clients, policies). */
const PLATFORM_READ = /FROM "(ProjectMembership|Project|Login|User|ClientApplication|AccessPolicy|Bot|JsonWebKey)"/;

/** The search statements a request to `url` (under /fhir/R4/) sends, each with its plan (EXPLAIN, not run). */
export async function plansOf(t: TestApp, url: string): Promise<{ sql: string; nodes: PlanNode[]; plan: PlanNode }[]> {
  const captured: { text: string; values: unknown[] }[] = [];
  const pool = t.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const original = pool.query.bind(pool);
  pool.query = (text: unknown, values?: unknown) => {
    // Prepared statements come as { name, text, values }.
    const q = typeof text === 'object' && text ? (text as { text: string; values: unknown[] }) : { text, values };
    // Search statements only (the job queue shares the pool): they read a search_ or a type's table;
    // not the caller's sign-in state, re-read by the authenticator when its cache has expired (a
    // slow machine), from tables a few rows long where a sequential scan is the right plan.
    if (
      typeof q.text === 'string' &&
      /^\s*(SELECT|WITH)/.test(q.text) &&
      /search_|FROM "/.test(q.text) &&
      !(PLATFORM_READ.test(q.text) && !/search_/.test(q.text))
    ) {
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
    const plan = result.rows[0]['QUERY PLAN'][0].Plan;
    out.push({ sql: c.text, nodes: scans(plan), plan });
  }
  return out;
}

/** The URL of the page reached by following `next` links `pages - 1` times from `first`. */
export async function pageByNextLinks(t: TestApp, first: string, pages: number): Promise<string | undefined> {
  let next: string | undefined = first;
  for (let i = 1; i < pages && next; i++) {
    const res: { json(): unknown } = await t.app.inject({ url: `/fhir/R4/${next}`, headers: auth(t) });
    const link: { url: string } | undefined = (res.json() as { link?: { relation: string; url: string }[] }).link?.find(
      (l) => l.relation === 'next',
    );
    next = link ? link.url.slice(link.url.indexOf('/fhir/R4/') + 9) : undefined;
  }
  return next;
}

/**
 * The benchmark's search workloads (tools/bench/scenarios-search.ts) on its data set, with
 * `patientId` a seeded patient's id; the deep page is added by the caller (pageByNextLinks).
 */
export function benchmarkSearches(patientId: string): string[] {
  const code = encodeURIComponent('http://loinc.org|8867-4');
  return [
    'Patient?name=Smi',
    `Patient?identifier=${encodeURIComponent('http://hearth.example/mrn|MRN-42')}`,
    `Observation?subject=Patient/${patientId}&code=${code}`,
    `Observation?code=${code}&date=ge2020&_sort=-date&_count=20`,
    `Observation?code=${code}&date=ge2020&_sort=-date&_count=20&_include=Observation:subject`,
    `Patient?_has:Observation:subject:code=${code}`,
    'Observation?subject.name=Smi',
  ];
}

/**
 * Asserts that every statement of the search at `url` reaches some table through an index and
 * reads none of the tables `whole` matches with a sequential scan. (On a small data set the
 * planner may still hash a few thousand index rows; at benchmark scale the same statements run
 * as ordered index scans.)
 */
export async function expectIndexedPlans(t: TestApp, url: string, whole: RegExp): Promise<void> {
  const plans = await plansOf(t, url);
  expect(plans.length, url).toBeGreaterThan(0);
  for (const plan of plans) {
    const shape = plan.nodes.map((n) => `${n['Node Type']} ${n['Relation Name']}`);
    expect(
      shape.some((s) => /Index|Bitmap/.test(s)),
      `${url}: ${shape.join(', ')}`,
    ).toBe(true);
    const seq = plan.nodes.filter((n) => n['Node Type'] === 'Seq Scan' && whole.test(n['Relation Name'] ?? ''));
    expect(
      seq.map((n) => n['Relation Name']),
      `${url}\n${plan.sql}`,
    ).toEqual([]);
  }
}
