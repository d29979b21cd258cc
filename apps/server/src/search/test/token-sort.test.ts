import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { auth, createAll, FHIR, ids, search, type SearchBundle } from './helpers.js';

// `code=X&_sort=±date` is read through the token row's date sort keys (query/token-sort.ts);
// the same search with a second, never-matching value takes the general path (sort row join),
// so each case is checked against that as well as against hand-written expectations.

let t: TestApp;
const byName = new Map<string, string>();
const TAG = 'http://test|token-sort';

function obs(name: string, codings: [string, string][], effective: Record<string, unknown> = {}) {
  return {
    resourceType: 'Observation',
    status: 'final',
    meta: { tag: [{ system: 'http://test', code: 'token-sort' }] },
    identifier: [{ system: 'http://test/name', value: name }],
    code: { coding: codings.map(([system, code]) => ({ system, code })) },
    ...effective,
  };
}

const RESOURCES = [
  obs('mar21', [['urn:s', 'a']], { effectiveDateTime: '2021-03-01' }),
  // The same coding twice, and the code under another system: one match, not two or three.
  obs(
    'jan22-dup',
    [
      ['urn:s', 'a'],
      ['urn:s', 'a'],
      ['urn:t', 'a'],
    ],
    { effectiveDateTime: '2022-01-01T10:00:00Z' },
  ),
  obs('period19-23', [['urn:s', 'a']], { effectivePeriod: { start: '2019-01-01', end: '2023-06-01' } }),
  // Several date values: sorted by the latest start descending, by the earliest ascending.
  obs('timing18-25', [['urn:s', 'a']], { effectiveTiming: { event: ['2018-05-01', '2025-01-01'] } }),
  obs('nodate', [['urn:s', 'a']]),
  obs('nodate2', [['urn:s', 'a']]),
  obs('other', [['urn:s', 'b']], { effectiveDateTime: '2024-01-01' }),
  ...[1, 2, 3, 4, 5, 6].map((m) => obs(`2020-${m}`, [['urn:s', 'a']], { effectiveDateTime: `2020-0${m}-15` })),
  obs('same-day', [['urn:s', 'a']], { effectiveDateTime: '2020-03-15' }),
];

function named(b: SearchBundle | string[]): string[] {
  const list = Array.isArray(b) ? b : ids(b);
  return list.map((id) => byName.get(id) ?? id);
}

async function walk(url: string): Promise<string[]> {
  const all: string[] = [];
  let next: string | undefined = url;
  for (let pages = 0; next; pages++) {
    if (pages > 50) throw new Error('too many pages');
    const b = await search(t, next);
    all.push(...ids(b));
    const l = b.link?.find((x) => x.relation === 'next')?.url;
    next = l ? l.slice(l.indexOf('/fhir/R4/') + '/fhir/R4/'.length) : undefined;
  }
  return named(all);
}

/** The statements one search runs. */
async function statements(url: string): Promise<string[]> {
  const captured: string[] = [];
  const pool = t.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const original = pool.query.bind(pool);
  pool.query = (text: unknown, values?: unknown) => {
    // Prepared statements come as { name, text, values }.
    const sql = typeof text === 'object' && text ? (text as { text: string }).text : text;
    if (typeof sql === 'string') captured.push(sql);
    return original(text, values);
  };
  try {
    await search(t, url);
  } finally {
    pool.query = original;
  }
  return captured.filter((s) => s.includes('FROM "Observation"'));
}

beforeAll(async () => {
  t = await createTestApp();
  const created = await createAll(t, RESOURCES);
  created.forEach((c, i) => byName.set(c.id, (RESOURCES[i].identifier[0] as { value: string }).value));
});
afterAll(async () => {
  await t?.close();
});

const tag = encodeURIComponent(TAG);

describe('code=X&_sort=date through the token rows', () => {
  it('is the path the search takes (and two values are not)', async () => {
    expect((await statements(`Observation?code=urn:s|a&_sort=-date`)).join('\n')).toContain('sort_last');
    expect((await statements(`Observation?code=urn:s|a&_sort=date`)).join('\n')).toContain('sort_first');
    expect((await statements(`Observation?code=urn:s|a,urn:s|zz&_sort=-date`)).join('\n')).not.toContain('sort_last');
  });

  it('orders by the latest start descending, resources without a date last, each once, across pages', async () => {
    const expected = [
      'timing18-25',
      'jan22-dup',
      'mar21',
      '2020-6',
      '2020-5',
      '2020-4',
      '2020-3',
      'same-day',
      '2020-2',
      '2020-1',
      'period19-23',
    ];
    const fast = await walk(`Observation?_tag=${tag}&code=urn:s|a&_sort=-date&_count=3`);
    // Equal dates come in id order: either of the two 2020-03-15 ones first.
    const normalise = (l: string[]) => l.map((n) => (n === 'same-day' ? '2020-3' : n));
    expect(normalise(fast.slice(0, 11))).toEqual(normalise(expected));
    expect(fast.slice(11).sort()).toEqual(['nodate', 'nodate2']);
    expect(await walk(`Observation?_tag=${tag}&code=urn:s|a,urn:s|zz&_sort=-date&_count=3`)).toEqual(fast);
    expect(await walk(`Observation?code=a&_sort=-date&_count=4`)).toEqual(fast);
  });

  it('orders by the earliest start ascending', async () => {
    const fast = await walk(`Observation?code=urn:s|a&_sort=date&_count=5`);
    expect(fast.slice(0, 3)).toEqual(['timing18-25', 'period19-23', '2020-1']);
    expect(fast.slice(-2).sort()).toEqual(['nodate', 'nodate2']);
    expect(fast).toHaveLength(13);
    expect(await walk(`Observation?code=urn:s|a,urn:s|zz&_sort=date&_count=5`)).toEqual(fast);
  });

  it('applies the date filter and the other filters', async () => {
    const fast = await walk(`Observation?code=urn:s|a&date=ge2021&_sort=-date&_count=2`);
    expect(fast).toEqual(['timing18-25', 'jan22-dup', 'mar21', 'period19-23']);
    expect(await walk(`Observation?code=urn:s|a,urn:s|zz&date=ge2021&_sort=-date&_count=2`)).toEqual(fast);
    const lt = await walk(`Observation?code=urn:s|a&date=lt2020-04&_sort=date&_count=2`);
    expect(lt).toEqual(['timing18-25', 'period19-23', '2020-1', '2020-2', ...lt.slice(4)]);
    expect(lt.slice(4).sort()).toEqual(['2020-3', 'same-day']);
    expect(await walk(`Observation?code=urn:s|a,urn:s|zz&date=lt2020-04&_sort=date&_count=2`)).toEqual(lt);
    expect(await walk(`Observation?code=urn:t|a&_sort=-date`)).toEqual(['jan22-dup']);
    expect(await walk(`Observation?code=urn:s|b&status=final&_sort=-date`)).toEqual(['other']);
  });

  it('follows a changed date when only the date changed', async () => {
    const id = [...byName].find(([, n]) => n === '2020-1')![0];
    const current = (await search(t, `Observation?_id=${id}`)).entry![0].resource;
    const res = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Observation/${id}`,
      headers: { 'content-type': FHIR, ...auth(t) },
      payload: JSON.stringify({ ...current, effectiveDateTime: '2030-01-01' }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await walk(`Observation?code=urn:s|a&_sort=-date&_count=2`))[0]).toBe('2020-1');
    expect((await walk(`Observation?code=urn:s|a&_sort=date&_count=20`)).slice(-3)[0]).toBe('2020-1');
  });
});
