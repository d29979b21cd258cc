import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { expandDefinition } from './expand.js';
import { findValueSet } from './resolve.js';

/**
 * Type-ahead on a 10,000-code system: the $expand filter must stay fast (target p95 < 50 ms).
 * Timings are printed, not asserted (the benchmark measures them on a quiet machine).
 */
const FHIR = 'application/fhir+json';
const SYSTEM = 'http://example.org/fhir/CodeSystem/generated-10k';
const VALUE_SET = 'http://example.org/fhir/ValueSet/generated-10k';
const SYLLABLES = [
  'car',
  'dio',
  'neu',
  'ro',
  'gas',
  'tro',
  'hep',
  'a',
  'to',
  'my',
  'path',
  'itis',
  'osis',
  'al',
  'ic',
  'pulm',
  'on',
  'ren',
  'derm',
  'hem',
  'ost',
  'eo',
  'arth',
  'ven',
  'lym',
  'pho',
  'cyt',
  'oma',
  'ure',
  'thy',
  'ro',
  'id',
];

let t: TestApp;
let seed = 42;
function random(): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
}
function pick<T>(list: T[]): T {
  return list[Math.floor(random() * list.length)];
}
const vocabulary = Array.from({ length: 600 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 3) }, () => pick(SYLLABLES)).join(''),
);

function generatedCodeSystem() {
  // 100 groups of 99 codes each, plus the groups: 10,000 concepts, two levels deep.
  const concept = Array.from({ length: 100 }, (_, g) => ({
    code: `G${g}`,
    display: `Group ${g} ${pick(vocabulary)}`,
    concept: Array.from({ length: 99 }, (_, i) => ({
      code: `C${g}-${i}`,
      display: Array.from({ length: 3 + Math.floor(random() * 3) }, () => pick(vocabulary)).join(' '),
    })),
  }));
  return {
    resourceType: 'CodeSystem',
    id: 'generated-10k',
    url: SYSTEM,
    status: 'active',
    content: 'complete',
    concept,
  };
}

beforeAll(async () => {
  t = await createTestApp({ config: { logLevel: 'error' } });
  const started = Date.now();
  const cs = await t.app.inject({
    method: 'PUT',
    url: '/fhir/R4/CodeSystem/generated-10k',
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify(generatedCodeSystem()),
  });
  expect(cs.statusCode, cs.body).toBe(201);
  console.log(`10,000-concept CodeSystem written and indexed in ${Date.now() - started} ms`);
  const vs = await t.app.inject({
    method: 'PUT',
    url: '/fhir/R4/ValueSet/generated-10k',
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify({
      resourceType: 'ValueSet',
      id: 'generated-10k',
      url: VALUE_SET,
      status: 'active',
      compose: { include: [{ system: SYSTEM }] },
    }),
  });
  expect(vs.statusCode).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

describe('type-ahead over 10,000 codes', () => {
  it('expands with filter text, count 20, and prints latency percentiles', async () => {
    const total = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/ValueSet/$expand?url=${VALUE_SET}&count=0`,
    });
    expect(total.json().expansion.total).toBe(10_000);

    const filters = Array.from({ length: 300 }, () => {
      const word = pick(vocabulary);
      const prefix = word.slice(0, 3 + Math.floor(random() * 3));
      return random() < 0.3 ? `${prefix} ${pick(vocabulary).slice(0, 3)}` : prefix;
    });
    for (const f of filters.slice(0, 20)) {
      await t.app.inject({
        headers: t.authHeaders,
        url: `/fhir/R4/ValueSet/$expand?url=${VALUE_SET}&count=20&filter=${encodeURIComponent(f)}`,
      });
    }
    const times: number[] = [];
    let matched = 0;
    for (const f of filters) {
      const started = process.hrtime.bigint();
      const res = await t.app.inject({
        headers: t.authHeaders,
        url: `/fhir/R4/ValueSet/$expand?url=${VALUE_SET}&count=20&filter=${encodeURIComponent(f)}`,
      });
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      matched += body.expansion.total > 0 ? 1 : 0;
      for (const c of body.expansion.contains ?? []) {
        const words = f.toLowerCase().split(' ');
        expect(
          words.every((w: string) => c.display.toLowerCase().includes(w)) || c.code.toLowerCase().startsWith(f),
        ).toBe(true);
      }
    }
    times.sort((a, b) => a - b);
    const fmt = (n: number) => n.toFixed(1);
    console.log(
      `$expand filter over 10,000 codes (${times.length} requests, ${matched} with matches): ` +
        `p50 ${fmt(percentile(times, 50))} ms, p95 ${fmt(percentile(times, 95))} ms, max ${fmt(times[times.length - 1])} ms`,
    );
    expect(matched).toBeGreaterThan(times.length / 2);

    // The same filters through the expansion function alone (no HTTP, no authentication).
    const scope = { projects: [t.testProject.projectId] };
    const direct: number[] = [];
    for (const f of filters) {
      const started = process.hrtime.bigint();
      const vs = await findValueSet(t.pool, scope, VALUE_SET);
      await expandDefinition(t.pool, scope, vs ?? {}, { filter: f, count: 20 });
      direct.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    direct.sort((a, b) => a - b);
    console.log(
      `expandDefinition alone: p50 ${fmt(percentile(direct, 50))} ms, p95 ${fmt(percentile(direct, 95))} ms, ` +
        `max ${fmt(direct[direct.length - 1])} ms`,
    );
  });

  it('pages a filtered expansion consistently', async () => {
    const word = vocabulary[0].slice(0, 3);
    const page = async (offset: number) =>
      (
        await t.app.inject({
          headers: t.authHeaders,
          url: `/fhir/R4/ValueSet/$expand?url=${VALUE_SET}&filter=${word}&count=10&offset=${offset}`,
        })
      ).json().expansion;
    const first = await page(0);
    const second = await page(10);
    expect(second.total).toBe(first.total);
    const codes = [...first.contains, ...second.contains].map((c: { code: string }) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('is-a over the generated hierarchy', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/ValueSet/$expand?count=200',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({
        resourceType: 'ValueSet',
        status: 'active',
        compose: { include: [{ system: SYSTEM, filter: [{ property: 'concept', op: 'is-a', value: 'G7' }] }] },
      }),
    });
    expect(res.json().expansion.total).toBe(100);
  });
});
