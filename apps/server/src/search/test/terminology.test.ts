import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { createAll, names, search, status } from './helpers.js';

// Token search through the terminology module: :in / :not-in (value set expansion), :above /
// :below (the code system's hierarchy), and _filter's in / ni / ss / sb.

let t: TestApp;
const byId = new Map<string, string>();
const CS = 'http://example.org/fhir/CodeSystem/shapes';
const VS = 'http://example.org/fhir/ValueSet/round-shapes';
const FEMALE = 'http://example.org/fhir/ValueSet/female';

async function find(url: string): Promise<string[]> {
  return names(await search(t, url), byId);
}
const f = (expr: string, type = 'Observation') => `${type}?_filter=${encodeURIComponent(expr)}`;

beforeAll(async () => {
  t = await createTestApp();
  // shape > round > (circle, oval); shape > square
  await createAll(t, [
    {
      resourceType: 'CodeSystem',
      url: CS,
      status: 'active',
      content: 'complete',
      hierarchyMeaning: 'is-a',
      concept: [
        {
          code: 'shape',
          concept: [{ code: 'round', concept: [{ code: 'circle' }, { code: 'oval' }] }, { code: 'square' }],
        },
      ],
    },
    {
      resourceType: 'ValueSet',
      url: VS,
      status: 'active',
      compose: { include: [{ system: CS, filter: [{ property: 'concept', op: 'is-a', value: 'round' }] }] },
    },
    {
      resourceType: 'ValueSet',
      url: FEMALE,
      status: 'active',
      compose: { include: [{ system: 'http://hl7.org/fhir/administrative-gender', concept: [{ code: 'female' }] }] },
    },
  ]);
  const list: [string, { resourceType: string; [k: string]: unknown }][] = [
    ['circle', { resourceType: 'Observation', status: 'final', code: { coding: [{ system: CS, code: 'circle' }] } }],
    ['oval', { resourceType: 'Observation', status: 'amended', code: { coding: [{ system: CS, code: 'oval' }] } }],
    ['round', { resourceType: 'Observation', status: 'final', code: { coding: [{ system: CS, code: 'round' }] } }],
    [
      'square',
      { resourceType: 'Observation', status: 'cancelled', code: { coding: [{ system: CS, code: 'square' }] } },
    ],
    // Same code, another system: never a member.
    [
      'other-circle',
      { resourceType: 'Observation', status: 'final', code: { coding: [{ system: 'http://other', code: 'circle' }] } },
    ],
    ['female', { resourceType: 'Patient', gender: 'female' }],
    ['male', { resourceType: 'Patient', gender: 'male' }],
    ['unknown', { resourceType: 'Patient', gender: 'unknown' }],
  ];
  const created = await createAll(
    t,
    list.map(([, r]) => r),
  );
  created.forEach((c, i) => byId.set(c.id, list[i][0]));
});
afterAll(async () => {
  await t?.close();
});

describe(':in and :not-in', () => {
  it('match codings whose system and code are in the expansion', async () => {
    expect(await find(`Observation?code:in=${VS}`)).toEqual(['circle', 'oval', 'round']);
    expect(await find(`Observation?code:not-in=${VS}`)).toEqual(['other-circle', 'square']);
    expect(await find(f(`code in ${VS}`))).toEqual(['circle', 'oval', 'round']);
    expect(await find(f(`code ni ${VS}`))).toEqual(['other-circle', 'square']);
  });

  it('match elements of type code (indexed without a system) by their code', async () => {
    // The R4 value sets are loaded at first start: their expansions carry the code systems.
    const gender = 'http://hl7.org/fhir/ValueSet/administrative-gender';
    expect(await find(`Patient?gender:in=${gender}`)).toEqual(['female', 'male', 'unknown']);
    expect(await find(`Patient?gender:not-in=${gender}`)).toEqual([]);
    expect(await find(`Patient?gender:in=${FEMALE}`)).toEqual(['female']);
    expect(await find(`Patient?gender:not-in=${FEMALE}`)).toEqual(['male', 'unknown']);
    expect(await find(f(`gender ni ${FEMALE}`, 'Patient'))).toEqual(['male', 'unknown']);
    const status = 'http://hl7.org/fhir/ValueSet/observation-status';
    expect(await find(`Observation?status:in=${status}`)).toEqual([
      'circle',
      'other-circle',
      'oval',
      'round',
      'square',
    ]);
  });

  it('answer 400 for a value set the server does not know', async () => {
    expect((await status(t, 'Observation?code:in=http://example.org/no-such-value-set')).status).toBe(400);
  });
});

describe(':below and :above', () => {
  it('follow the hierarchy of a code system held here', async () => {
    expect(await find(`Observation?code:below=${CS}|round`)).toEqual(['circle', 'oval', 'round']);
    expect(await find(`Observation?code:below=${CS}|shape`)).toEqual(['circle', 'oval', 'round', 'square']);
    expect(await find(`Observation?code:below=${CS}|circle`)).toEqual(['circle']);
    expect(await find(`Observation?code:above=${CS}|circle`)).toEqual(['circle', 'round']);
    expect(await find(`Observation?code:above=${CS}|square`)).toEqual(['square']);
    // OR of two codes, and AND with another parameter.
    expect(await find(`Observation?code:below=${CS}|circle,${CS}|square`)).toEqual(['circle', 'square']);
    expect(await find(`Observation?code:below=${CS}|round&status=final`)).toEqual(['circle', 'round']);
  });

  it('_filter ss and sb: subsumes and subsumed by', async () => {
    expect(await find(f(`code sb ${CS}|round`))).toEqual(['circle', 'oval', 'round']);
    expect(await find(f(`code ss ${CS}|oval`))).toEqual(['oval', 'round']);
    expect(await find(f(`code sb ${CS}|round and status eq amended`))).toEqual(['oval']);
    expect(await find(f(`not (code sb ${CS}|round)`))).toEqual(['other-circle', 'square']);
  });

  it('match the code itself in a code system not held here', async () => {
    expect(await find('Observation?code:below=http://other|circle')).toEqual(['other-circle']);
    expect(await find(f('code sb http://other|circle'))).toEqual(['other-circle']);
  });

  it('need system|code', async () => {
    expect((await status(t, 'Observation?code:below=round')).status).toBe(400);
    expect((await status(t, f('status ss final'))).status).toBe(400);
    expect((await status(t, f('_lastUpdated sb 2020'))).status).toBe(400);
  });
});
