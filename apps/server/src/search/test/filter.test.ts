import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { createAll, names, search, status } from './helpers.js';

let t: TestApp;
const byId = new Map<string, string>();

async function find(url: string): Promise<string[]> {
  return names(await search(t, url), byId);
}
const f = (expr: string, type = 'Patient') => `${type}?_filter=${encodeURIComponent(expr)}`;

beforeAll(async () => {
  t = await createTestApp();
  const list: [string, { resourceType: string; [k: string]: unknown }][] = [
    [
      'ann',
      {
        resourceType: 'Patient',
        name: [{ family: 'Anderson', given: ['Ann'] }],
        gender: 'female',
        birthDate: '1970-02-03',
      },
    ],
    ['bea', { resourceType: 'Patient', name: [{ family: 'Béatrice' }], gender: 'female', birthDate: '1990-07-08' }],
    [
      'carl',
      {
        resourceType: 'Patient',
        name: [{ family: 'Carlsson', given: ['Carl'] }],
        gender: 'male',
        birthDate: '1985-12-24',
      },
    ],
    ['dan', { resourceType: 'Patient', name: [{ family: 'Danielsen' }], gender: 'male' }],
  ];
  const created = await createAll(
    t,
    list.map(([, r]) => r),
  );
  created.forEach((c, i) => byId.set(c.id, list[i][0]));
  const id = (name: string) => created[list.findIndex(([n]) => n === name)].id;
  const obs: [string, { resourceType: string; [k: string]: unknown }][] = [
    [
      'o-ann',
      {
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code: '1' }] },
        subject: { reference: `Patient/${id('ann')}` },
        effectiveDateTime: '2020-01-01',
      },
    ],
    [
      'o-carl',
      {
        resourceType: 'Observation',
        status: 'preliminary',
        code: { coding: [{ system: 'http://loinc.org', code: '2' }] },
        subject: { reference: `Patient/${id('carl')}` },
        effectivePeriod: { start: '2021-01-01', end: '2021-06-30' },
      },
    ],
  ];
  const createdObs = await createAll(
    t,
    obs.map(([, r]) => r),
  );
  createdObs.forEach((c, i) => byId.set(c.id, obs[i][0]));
  await createAll(t, [
    {
      resourceType: 'ValueSet',
      url: 'http://example.org/fhir/ValueSet/code-one',
      status: 'active',
      compose: { include: [{ system: 'http://loinc.org', concept: [{ code: '1' }] }] },
    },
  ]);
});
afterAll(async () => {
  await t?.close();
});

describe('_filter', () => {
  it('compares strings: eq, sw, co, ew, ne (accent- and case-insensitive)', async () => {
    expect(await find(f('family eq "anderson"'))).toEqual(['ann']);
    expect(await find(f('family sw car'))).toEqual(['carl']);
    expect(await find(f('family co iel'))).toEqual(['dan']);
    expect(await find(f('family ew sson'))).toEqual(['carl']);
    expect(await find(f('family eq beatrice'))).toEqual(['bea']);
    expect(await find(f('family ne anderson'))).toEqual(['bea', 'carl', 'dan']);
  });
  it('combines with and, or, not and parentheses', async () => {
    expect(await find(f('gender eq female and birthdate lt 1980'))).toEqual(['ann']);
    expect(await find(f('gender eq male or birthdate ge 1990'))).toEqual(['bea', 'carl', 'dan']);
    expect(await find(f('not (gender eq male) and (family sw a or family sw b)'))).toEqual(['ann', 'bea']);
    expect(await find(f('gender eq female and (birthdate lt 1980 or birthdate gt 1989)'))).toEqual(['ann', 'bea']);
  });
  it('pr, dates with po, tokens with system', async () => {
    expect(await find(f('birthdate pr false'))).toEqual(['dan']);
    expect(await find(f('date po 2021-03', 'Observation'))).toEqual(['o-carl']);
    expect(await find(f('code eq http://loinc.org|2', 'Observation'))).toEqual(['o-carl']);
    expect(await find(f('status ne final', 'Observation'))).toEqual(['o-carl']);
  });
  it('follows paths through references, with a filter on the target', async () => {
    expect(await find(f('subject.name sw carl', 'Observation'))).toEqual(['o-carl']);
    expect(await find(f('subject[gender eq female].birthdate lt 1980', 'Observation'))).toEqual(['o-ann']);
    expect(await find(f('subject[gender eq male] pr true', 'Observation'))).toEqual(['o-carl']);
    expect(await find(f('subject[gender eq male] pr false', 'Observation'))).toEqual(['o-ann']);
  });
  it('date sa / eb, re on references, quantities with gt / lt / ge and units', async () => {
    const annId = [...byId].find(([, n]) => n === 'ann')![0];
    expect(await find(f(`subject re Patient/${annId}`, 'Observation'))).toEqual(['o-ann']);
    expect(await find(f('date sa 2020-06-01', 'Observation'))).toEqual(['o-carl']);
    expect(await find(f('date eb 2020-06-01', 'Observation'))).toEqual(['o-ann']);
    const meta = { tag: [{ system: 'http://test', code: 'filter-quantity' }] };
    const quantities: [string, { value: number; code: string }][] = [
      ['q5mg', { value: 5, code: 'mg' }],
      ['q12mg', { value: 12, code: 'mg' }],
      ['q0.011g', { value: 0.011, code: 'g' }],
    ];
    const made = await createAll(
      t,
      quantities.map(([, q]) => ({
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'dose' },
        meta,
        valueQuantity: { ...q, unit: q.code, system: 'http://unitsofmeasure.org' },
      })),
    );
    made.forEach((m, i) => byId.set(m.id, quantities[i][0]));
    const q = (expr: string) => f(`_tag eq http://test|filter-quantity and (${expr})`, 'Observation');
    expect(await find(q('value-quantity gt 10'))).toEqual(['q12mg']);
    expect(await find(q('value-quantity lt 6'))).toEqual(['q0.011g', 'q5mg']);
    // 0.011 g is 11 mg: compared in a common unit.
    expect(await find(q('value-quantity ge 10|http://unitsofmeasure.org|mg'))).toEqual(['q0.011g', 'q12mg']);
    expect(await find(q('value-quantity le 0.006|http://unitsofmeasure.org|g'))).toEqual(['q5mg']);
  });
  it('answers 400 to syntax errors and unknown parameters', async () => {
    expect((await status(t, f('family eq'))).status).toBe(400);
    expect((await status(t, f('(family eq x'))).status).toBe(400);
    expect((await status(t, f('nosuch eq x'))).status).toBe(400);
    expect((await status(t, f('family zz x'))).status).toBe(400);
    expect((await status(t, f('birthdate ss 2020'))).status).toBe(400);
  });
});

describe(':in and :not-in', () => {
  it('expands the value set through the terminology module', async () => {
    // More in terminology.test.ts.
    expect(await find('Observation?code:in=http://example.org/fhir/ValueSet/code-one')).toEqual(['o-ann']);
    expect(
      await find(
        'Observation?code:not-in=http://example.org/fhir/ValueSet/code-one&_tag:not=http://test|filter-quantity',
      ),
    ).toEqual(['o-carl']);
    expect(await find(f('code in http://example.org/fhir/ValueSet/code-one', 'Observation'))).toEqual(['o-ann']);
  });
});
