import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { auth, createAll, ids, search, status, type SearchBundle } from './helpers.js';

let t: TestApp;
const dates = new Map<string, string | undefined>();

function relative(url: string): string {
  return url.slice(url.indexOf('/fhir/R4/') + '/fhir/R4/'.length);
}
function link(b: SearchBundle, relation: string): string | undefined {
  const l = b.link?.find((x) => x.relation === relation);
  return l ? relative(l.url) : undefined;
}

/** Follows next links from `url`; returns every match id in order and the number of pages. */
async function walk(url: string): Promise<{ all: string[]; pages: number }> {
  const all: string[] = [];
  let next: string | undefined = url;
  let pages = 0;
  while (next) {
    const b = await search(t, next);
    all.push(...ids(b));
    next = link(b, 'next');
    pages++;
    if (pages > 100) throw new Error('too many pages');
  }
  return { all, pages };
}

beforeAll(async () => {
  t = await createTestApp();
  // 25 encounters: 21 with a period start (some equal), 4 without.
  const resources: { resourceType: string; [key: string]: unknown }[] = [];
  for (let i = 0; i < 25; i++) {
    const start = i < 21 ? `2020-01-${String((i % 7) + 1).padStart(2, '0')}T0${i % 3}:00:00Z` : undefined;
    resources.push({
      resourceType: 'Encounter',
      status: i % 2 ? 'finished' : 'planned',
      class: { code: 'AMB' },
      ...(start ? { period: { start } } : {}),
      meta: { tag: [{ system: 'http://test', code: 'paging' }] },
    });
  }
  const created = await createAll(t, resources);
  created.forEach((c, i) => dates.set(c.id, (resources[i] as { period?: { start: string } }).period?.start));
  await createAll(t, [
    { resourceType: 'Patient', name: [{ family: "O'Brien; DROP TABLE resource;--" }], gender: 'male' },
    { resourceType: 'Patient', name: [{ family: 'Zeta' }], gender: 'female', birthDate: '1990-01-01' },
  ]);
});
afterAll(async () => {
  await t?.close();
});

describe('paging', () => {
  it('pages with keyset next links through every match exactly once', async () => {
    const first = await search(t, 'Encounter?_count=10');
    expect(ids(first)).toHaveLength(10);
    expect(first.total).toBeUndefined();
    expect(link(first, 'next')).toContain('_cursor=');
    const { all, pages } = await walk('Encounter?_count=10');
    expect(pages).toBe(3);
    expect(new Set(all).size).toBe(25);
    expect(all).toEqual([...all].sort());
  });

  it('defaults _count to 20 and caps it at 1000', async () => {
    expect(ids(await search(t, 'Encounter'))).toHaveLength(20);
    expect(ids(await search(t, 'Encounter?_count=5000'))).toHaveLength(25);
  });

  it('accepts _offset, with previous links, and reports the total on the last page', async () => {
    const all = ids(await search(t, 'Encounter?_count=100'));
    const page = await search(t, 'Encounter?_count=10&_offset=10');
    expect(ids(page)).toEqual(all.slice(10, 20));
    expect(link(page, 'previous')).not.toContain('_offset');
    const last = await search(t, 'Encounter?_count=10&_offset=20');
    expect(last.total).toBe(25);
    expect(link(last, 'previous')).toContain('_offset=10');
    expect((await status(t, 'Encounter?_offset=20000')).status).toBe(400);
  });

  it('refuses a forged cursor', async () => {
    expect((await status(t, 'Encounter?_cursor=bm9wZQ')).status).toBe(400);
  });
});

describe('_sort', () => {
  it('sorts by a date descending, resources without one last, across pages', async () => {
    const { all } = await walk('Encounter?_sort=-date&_count=4');
    expect(all).toHaveLength(25);
    const starts = all.map((id) => dates.get(id));
    const withDate = starts.filter(Boolean) as string[];
    expect(withDate).toEqual([...withDate].sort().reverse());
    expect(starts.slice(21)).toEqual([undefined, undefined, undefined, undefined]);
  });
  it('sorts ascending and by several keys', async () => {
    const asc = ids(await search(t, 'Encounter?_sort=date&_count=30'));
    const starts = asc.map((id) => dates.get(id)).filter(Boolean) as string[];
    expect(starts).toEqual([...starts].sort());
    const multi = await walk('Encounter?_sort=status,-date&_count=3');
    expect(new Set(multi.all).size).toBe(25);
  });
  it('filters on the sort parameter also match values other than the sorted one', async () => {
    const [zoe] = await createAll(t, [{ resourceType: 'Patient', name: [{ family: 'Adams', given: ['Zoe'] }] }]);
    // Sorted by its smallest name ("adams"), found by another one ("zoe").
    expect(ids(await search(t, 'Patient?name=zo&_sort=name'))).toEqual([zoe.id]);
    expect(ids(await search(t, 'Patient?name=zo&_sort=-name'))).toEqual([zoe.id]);
    expect(ids(await search(t, 'Patient?name=adam&_sort=-name'))).toEqual([zoe.id]);
  });

  it('sorts by a token: the smallest code (not a text without one), resources without a code last', async () => {
    const tag = 'http://test|token-sort';
    const meta = { tag: [{ system: 'http://test', code: 'token-sort' }] };
    const obs = (status: string, code: Record<string, unknown>) => ({
      resourceType: 'Observation',
      status,
      code,
      meta,
    });
    const [b, az, c, textOnly] = await createAll(t, [
      obs('final', { coding: [{ system: 'http://s', code: 'b' }], text: 'Alpha' }),
      obs('final', {
        coding: [
          { system: 'http://s', code: 'z' },
          { system: 'http://s', code: 'a' },
        ],
      }),
      obs('amended', { coding: [{ system: 'http://s', code: 'c', display: 'Zulu' }] }),
      obs('preliminary', { text: 'only a text' }),
    ]);
    expect(ids(await search(t, `Observation?_tag=${tag}&_sort=code`))).toEqual([az.id, b.id, c.id, textOnly.id]);
    expect(ids(await search(t, `Observation?_tag=${tag}&_sort=-code`))).toEqual([az.id, c.id, b.id, textOnly.id]);
    // As a later key: final (a, b), then amended, preliminary.
    expect(ids(await search(t, `Observation?_tag=${tag}&_sort=-status,code`))).toEqual([
      textOnly.id,
      az.id,
      b.id,
      c.id,
    ]);
    // Paged one by one through the keyset cursor, the same order.
    expect((await walk(`Observation?_tag=${tag}&_sort=code&_count=1`)).all).toEqual([az.id, b.id, c.id, textOnly.id]);
    // A :text filter on the sort parameter still sees a text that is not the sort row.
    expect(ids(await search(t, `Observation?_tag=${tag}&code:text=alpha&_sort=code`))).toEqual([b.id]);
    expect(ids(await search(t, `Observation?_tag=${tag}&code=http://s|b&_sort=code`))).toEqual([b.id]);
  });

  it('sorts by _lastUpdated and _id', async () => {
    const { all } = await walk('Encounter?_sort=-_lastUpdated&_count=7');
    expect(all).toHaveLength(25);
    const byId = ids(await search(t, 'Encounter?_sort=-_id&_count=30'));
    expect(byId).toEqual([...byId].sort().reverse());
  });
});

describe('result parameters', () => {
  it('_total accurate and estimate; _summary=count', async () => {
    expect((await search(t, 'Encounter?_count=1&_total=accurate')).total).toBe(25);
    expect((await search(t, 'Encounter?_count=1&_total=estimate')).total).toBe(25);
    const count = await search(t, 'Encounter?_summary=count&status=finished');
    expect(count.total).toBe(12);
    expect(count.entry).toBeUndefined();
  });
  it('_summary=true keeps summary elements only', async () => {
    await createAll(t, [
      {
        resourceType: 'Patient',
        name: [{ family: 'Summarised' }],
        photo: [{ contentType: 'image/png', url: 'http://x/p.png' }],
        text: { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">Summarised</div>' },
      },
    ]);
    const p = (await search(t, 'Patient?name=summarised&_summary=true')).entry![0].resource as Record<string, unknown>;
    expect(p.name).toBeDefined();
    expect(p.photo).toBeUndefined();
    const data = (await search(t, 'Patient?name=summarised&_summary=data')).entry![0].resource as Record<
      string,
      unknown
    >;
    expect(data.photo).toBeDefined();
    expect(data.text).toBeUndefined();
    const text = (await search(t, 'Patient?name=summarised&_summary=text')).entry![0].resource as Record<
      string,
      unknown
    >;
    expect(JSON.stringify(text.text)).toContain('Summarised');
    expect(text.name).toBeUndefined();
    expect(text.photo).toBeUndefined();
    expect(text.id).toBeDefined();
  });

  it('_elements and _summary shape entries', async () => {
    const b = await search(t, 'Patient?name=zeta&_elements=gender');
    const p = b.entry![0].resource as Record<string, unknown>;
    expect(p.gender).toBe('female');
    expect(p.name).toBeUndefined();
    expect(JSON.stringify(p.meta)).toContain('SUBSETTED');
  });
});

describe('errors and handling', () => {
  it('ignores unknown parameters under lenient handling and says so', async () => {
    const b = await search(t, 'Patient?foo=bar&gender=female');
    expect(ids(b)).toHaveLength(1);
    const outcome = b.entry!.find((e) => e.search.mode === 'outcome');
    expect(JSON.stringify(outcome?.resource)).toContain('foo');
  });
  it('answers 400 to unknown parameters under strict handling', async () => {
    const res = await status(t, 'Patient?foo=bar', { prefer: 'handling=strict' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('foo');
  });
  it('400 for malformed values, naming the parameter', async () => {
    for (const url of [
      'Patient?birthdate=notadate',
      'Patient?_count=-1',
      'Patient?name:missing=maybe',
      'Patient?gender:above=x',
      'Patient?_sort=nosuchparam',
    ]) {
      const res = await status(t, url, { prefer: 'handling=strict' });
      expect(res.status, url).toBe(400);
    }
  });
  it('bounds the work one search can ask for', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `v${i}`).join(',');
    expect((await status(t, `Patient?identifier=${many}`)).status).toBe(400);
    const deep = `Observation?${Array.from({ length: 13 }, () => 'subject:Patient').join('.')}.name=x`;
    expect((await status(t, deep)).status).toBe(400);
    // Dates PostgreSQL cannot hold are clamped, not a 500.
    expect((await status(t, 'Patient?birthdate=lt0000-01-01')).status).toBe(200);
    expect((await status(t, 'Patient?birthdate=gt9999-12-31T23:59:59Z')).status).toBe(200);
  });

  it('binds hostile values as data', async () => {
    const b = await search(t, `Patient?name=${encodeURIComponent("O'Brien; DROP")}`);
    expect(ids(b)).toHaveLength(1);
    expect(ids(await search(t, `Patient?name=${encodeURIComponent("%' OR '1'='1")}`))).toHaveLength(0);
    expect(ids(await search(t, `Patient?name=${encodeURIComponent('%')}`))).toHaveLength(0);
  });
});

describe('search forms', () => {
  it('POST _search with a form body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient/_search',
      headers: { ...t.authHeaders, 'content-type': 'application/x-www-form-urlencoded', ...auth(t) },
      payload: 'gender=female&_count=5',
    });
    expect(res.statusCode).toBe(200);
    expect(ids(res.json())).toHaveLength(1);
  });
  it('POST _search: a repeated name in the form body is an AND, as in a query string', async () => {
    const post = async (payload: string, query = '') =>
      t.app.inject({
        method: 'POST',
        url: `/fhir/R4/Encounter/_search${query}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth(t) },
        payload,
      });
    const res = await post('date=sa2020-01-02&date=lt2020-01-05&_count=50');
    expect(res.statusCode).toBe(200);
    const expected = [...dates].filter(([, d]) => d && d >= '2020-01-03' && d < '2020-01-05').map(([id]) => id);
    expect(expected.length).toBe(6);
    expect(ids(res.json()).sort()).toEqual(expected.sort());
    expect(ids(await search(t, 'Encounter?date=sa2020-01-02&date=lt2020-01-05&_count=50')).sort()).toEqual(
      expected.sort(),
    );
    // Query string and body together: all of them apply.
    const both = await post('date=lt2020-01-05&_count=50', '?date=sa2020-01-02');
    expect(ids(both.json()).sort()).toEqual(expected.sort());
  });
  it('system search with _type and a common parameter', async () => {
    const b = await search(t, '?_type=Patient,Encounter&_tag=http://test|paging&_count=50');
    expect(ids(b)).toHaveLength(25);
    const mixed = await search(t, '_search?_type=Patient,Encounter&_count=50');
    const patients = (await search(t, 'Patient?_summary=count')).total ?? 0;
    expect(ids(mixed)).toHaveLength(25 + patients);
  });
});
