import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { auth, createAll, ids, search } from './helpers.js';

// Unsorted pages read their ids from the index rows first (query/candidates.ts): every page must
// still be full and every live match come exactly once, whatever else has index rows (contained
// resources, deleted resources, other filters).

let t: TestApp;
const live = new Set<string>();
const females = new Set<string>();

async function walk(url: string): Promise<{ all: string[]; sizes: number[] }> {
  const all: string[] = [];
  const sizes: number[] = [];
  let next: string | undefined = url;
  while (next) {
    if (sizes.length > 50) throw new Error('too many pages');
    const b = await search(t, next);
    all.push(...ids(b));
    sizes.push(ids(b).length);
    const l = b.link?.find((x) => x.relation === 'next')?.url;
    next = l ? l.slice(l.indexOf('/fhir/R4/') + '/fhir/R4/'.length) : undefined;
  }
  return { all, sizes };
}

beforeAll(async () => {
  t = await createTestApp();
  const patients = await createAll(
    t,
    Array.from({ length: 12 }, (_, i) => ({
      resourceType: 'Patient',
      name: [{ family: `Candidate${i}`, given: ['Candy'] }],
      gender: i % 3 ? 'male' : 'female',
    })),
  );
  patients.forEach((p, i) => {
    live.add(p.id);
    if (i % 3 === 0) females.add(p.id);
  });
  // Deleted ones match no more.
  for (const p of patients.slice(0, 2)) {
    const res = await t.app.inject({ method: 'DELETE', url: `/fhir/R4/Patient/${p.id}`, headers: auth(t) });
    expect(res.statusCode).toBeLessThan(300);
    live.delete(p.id);
    females.delete(p.id);
  }
  // Contained Patients of the same name have index rows of their own, but are not matches.
  await createAll(
    t,
    Array.from({ length: 4 }, () => ({
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'x' },
      contained: [{ resourceType: 'Patient', id: 'p', name: [{ family: 'Candidate0' }], gender: 'female' }],
      subject: { reference: '#p' },
    })),
  );
});
afterAll(async () => {
  await t?.close();
});

describe('unsorted pages read through index rows', () => {
  it('are full and hold every live match once', async () => {
    const { all, sizes } = await walk('Patient?name=candidate&_count=3');
    expect(new Set(all)).toEqual(live);
    expect(all).toHaveLength(live.size);
    expect(all).toEqual([...all].sort());
    expect(sizes.slice(0, -1).every((n) => n === 3)).toBe(true);
  });

  it('apply the other filters, and _offset', async () => {
    const { all } = await walk('Patient?name=candy&gender=female&_count=1');
    expect(new Set(all)).toEqual(females);
    const everything = ids(await search(t, 'Patient?name=candidate&_count=100'));
    expect(ids(await search(t, 'Patient?name=candidate&_count=4&_offset=4'))).toEqual(everything.slice(4, 8));
    // A name held twice by one resource (family and given both start with "cand") counts once.
    expect(everything).toHaveLength(live.size);
  });
});
