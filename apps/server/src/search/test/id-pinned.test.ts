import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { createAll, ids, search } from './helpers.js';

// With `_id=` naming the resources, their index rows are probed per resource (a fenced subquery),
// whatever the statistics say about how common a value is: a subscription's criteria check runs
// `criteria&_id=a,b,c` after every write.

let t: TestApp;
let patients: { id: string }[] = [];
const sent: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  t.pool.on('acquire', (client) => {
    const marked = client as unknown as { hearthSpy?: boolean; query: (...args: unknown[]) => unknown };
    if (marked.hearthSpy) return;
    marked.hearthSpy = true;
    const query = marked.query.bind(client);
    marked.query = (...args: unknown[]) => {
      const first = args[0];
      sent.push(typeof first === 'string' ? first : String((first as { text?: string }).text ?? ''));
      return query(...args);
    };
  });
  patients = await createAll(
    t,
    Array.from({ length: 6 }, (_, i) => ({
      resourceType: 'Patient',
      name: [{ family: `Pinned${i}` }],
      gender: i % 2 ? 'male' : 'female',
      identifier: [{ system: 'urn:pinned', value: `v${i}` }],
    })),
  );
});
afterAll(async () => {
  await t?.close();
});

async function searchSql(query: string): Promise<{ found: string[]; sql: string }> {
  sent.length = 0;
  const found = ids(await search(t, query));
  return { found, sql: sent.filter((s) => s.includes('search_token')).join('\n') };
}

describe('_id with other parameters', () => {
  it('finds exactly the named resources that meet the other parameters, probing their index rows per resource', async () => {
    const named = patients.slice(0, 4).map((p) => p.id);
    const { found, sql } = await searchSql(`Patient?gender=male&_id=${named.join(',')}`);
    expect(found.sort()).toEqual([named[1], named[3]].sort());
    expect(sql).toMatch(/\(SELECT \* FROM search_token WHERE resource_id = r\.id AND code = \$\d+ OFFSET 0\)/);
  });

  it('keeps :not and several parameters right', async () => {
    const named = patients.map((p) => p.id);
    const { found } = await searchSql(`Patient?_id=${named.join(',')}&gender:not=male&identifier=urn:pinned|v2`);
    expect(found).toEqual([named[2]]);
  });

  it('without _id, index rows are searched by value as before', async () => {
    const { found, sql } = await searchSql('Patient?gender=female&identifier=urn:pinned|v4');
    expect(found).toEqual([patients[4].id]);
    expect(sql).not.toContain('OFFSET 0');
  });
});
