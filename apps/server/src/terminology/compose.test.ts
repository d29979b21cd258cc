import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { expandCodes, subsumedCodes, validateCode, valueSetMembersSql } from './api.js';

const FHIR = 'application/fhir+json';
const SYSTEM = 'http://example.org/fhir/CodeSystem/shapes';
let t: TestApp;

async function put(resource: { resourceType: string; id: string; [key: string]: unknown }) {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/fhir/R4/${resource.resourceType}/${resource.id}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify(resource),
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res;
}

async function expand(compose: object, query = ''): Promise<string[]> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/ValueSet/$expand${query}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify({ resourceType: 'ValueSet', status: 'active', compose }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().expansion.contains ?? []).map((c: { code: string }) => c.code);
}

/*
 * shape
 * ├── polygon (sides=many)
 * │   ├── triangle (sides=3)
 * │   └── quadrilateral (sides=4)
 * │       ├── square (sides=4, regular=true)
 * │       └── rectangle (sides=4)
 * └── round
 *     ├── circle (retired)
 *     └── ellipse
 */
const shapes = {
  resourceType: 'CodeSystem',
  id: 'shapes',
  url: SYSTEM,
  status: 'active',
  content: 'complete',
  hierarchyMeaning: 'is-a',
  property: [
    { code: 'sides', type: 'string' },
    { code: 'regular', type: 'boolean' },
    { code: 'status', type: 'code' },
  ],
  concept: [
    {
      code: 'shape',
      display: 'Shape',
      concept: [
        {
          code: 'polygon',
          display: 'Polygon',
          property: [{ code: 'sides', valueString: 'many' }],
          concept: [
            { code: 'triangle', display: 'Triangle', property: [{ code: 'sides', valueString: '3' }] },
            {
              code: 'quadrilateral',
              display: 'Quadrilateral',
              property: [{ code: 'sides', valueString: '4' }],
              concept: [
                {
                  code: 'square',
                  display: 'Square',
                  property: [
                    { code: 'sides', valueString: '4' },
                    { code: 'regular', valueBoolean: true },
                  ],
                },
                { code: 'rectangle', display: 'Rectangle', property: [{ code: 'sides', valueString: '4' }] },
              ],
            },
          ],
        },
        {
          code: 'round',
          display: 'Round shape',
          concept: [
            { code: 'circle', display: 'Circle', property: [{ code: 'status', valueCode: 'retired' }] },
            { code: 'ellipse', display: 'Ellipse' },
          ],
        },
      ],
    },
  ],
};

beforeAll(async () => {
  t = await createTestApp();
  await put(shapes);
  await put({
    resourceType: 'ValueSet',
    id: 'polygons',
    url: 'http://example.org/fhir/ValueSet/polygons',
    status: 'active',
    compose: {
      include: [{ system: SYSTEM, filter: [{ property: 'concept', op: 'descendent-of', value: 'polygon' }] }],
    },
  });
  await put({
    resourceType: 'ValueSet',
    id: 'four-sided',
    url: 'http://example.org/fhir/ValueSet/four-sided',
    status: 'active',
    compose: { include: [{ system: SYSTEM, filter: [{ property: 'sides', op: '=', value: '4' }] }] },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('compose over a project code system indexed on write', () => {
  it('includes a whole system in definition order', async () => {
    expect(await expand({ include: [{ system: SYSTEM }] })).toEqual([
      'shape',
      'polygon',
      'triangle',
      'quadrilateral',
      'square',
      'rectangle',
      'round',
      'circle',
      'ellipse',
    ]);
  });

  it('applies hierarchy filters: is-a, descendent-of, is-not-a, generalizes', async () => {
    const f = (op: string, value: string) =>
      expand({ include: [{ system: SYSTEM, filter: [{ property: 'concept', op, value }] }] });
    expect(await f('is-a', 'quadrilateral')).toEqual(['quadrilateral', 'square', 'rectangle']);
    expect(await f('descendent-of', 'quadrilateral')).toEqual(['square', 'rectangle']);
    expect(await f('is-not-a', 'polygon')).toEqual(['shape', 'round', 'circle', 'ellipse']);
    expect(await f('generalizes', 'square')).toEqual(['shape', 'polygon', 'quadrilateral', 'square']);
  });

  it('applies property filters: =, in, not-in, regex, exists, and ANDs several', async () => {
    const f = (...filter: object[]) => expand({ include: [{ system: SYSTEM, filter }] });
    expect(await f({ property: 'sides', op: '=', value: '4' })).toEqual(['quadrilateral', 'square', 'rectangle']);
    expect(await f({ property: 'sides', op: 'in', value: '3,many' })).toEqual(['polygon', 'triangle']);
    expect(await f({ property: 'code', op: 'regex', value: '[a-z]*angle' })).toEqual(['triangle', 'rectangle']);
    expect(await f({ property: 'regular', op: 'exists', value: 'true' })).toEqual(['square']);
    expect(await f({ property: 'parent', op: '=', value: 'round' })).toEqual(['circle', 'ellipse']);
    expect(
      await f({ property: 'concept', op: 'is-a', value: 'polygon' }, { property: 'sides', op: 'not-in', value: '4' }),
    ).toEqual(['polygon', 'triangle']);
  });

  it('lists concepts (display from the system) and removes excludes', async () => {
    expect(
      await expand({
        include: [{ system: SYSTEM, concept: [{ code: 'ellipse' }, { code: 'square' }, { code: 'nope' }] }],
      }),
    ).toEqual(['ellipse', 'square']);
    expect(
      await expand({
        include: [{ system: SYSTEM, filter: [{ property: 'concept', op: 'is-a', value: 'polygon' }] }],
        exclude: [{ system: SYSTEM, filter: [{ property: 'concept', op: 'is-a', value: 'quadrilateral' }] }],
      }),
    ).toEqual(['polygon', 'triangle']);
  });

  it('nests value sets: union of includes, intersection within one include', async () => {
    const union = await expand({
      include: [
        { valueSet: ['http://example.org/fhir/ValueSet/polygons'] },
        { system: SYSTEM, concept: [{ code: 'circle' }] },
      ],
    });
    expect(union).toEqual(['triangle', 'quadrilateral', 'square', 'rectangle', 'circle']);
    const intersection = await expand({
      include: [
        { valueSet: ['http://example.org/fhir/ValueSet/polygons', 'http://example.org/fhir/ValueSet/four-sided'] },
      ],
    });
    expect(intersection).toEqual(['quadrilateral', 'square', 'rectangle']);
    const excludeNested = await expand({
      include: [{ system: SYSTEM }],
      exclude: [{ valueSet: ['http://example.org/fhir/ValueSet/polygons'] }],
    });
    expect(excludeNested).toEqual(['shape', 'polygon', 'round', 'circle', 'ellipse']);
  });

  it('honours inactive=false, activeOnly and filter text', async () => {
    expect(
      await expand({
        inactive: false,
        include: [{ system: SYSTEM, filter: [{ property: 'concept', op: 'is-a', value: 'round' }] }],
      }),
    ).toEqual(['round', 'ellipse']);
    expect(await expand({ include: [{ system: SYSTEM }] }, '?activeOnly=true&filter=round')).toEqual(['round']);
    expect(await expand({ include: [{ system: SYSTEM }] }, '?filter=angle')).toEqual(['triangle', 'rectangle']);
    expect(await expand({ include: [{ system: SYSTEM }] }, '?filter=sq')).toEqual(['square']);
  });

  it('refuses a cycle, an unknown system and a bad regex with a 4xx outcome', async () => {
    await put({
      resourceType: 'ValueSet',
      id: 'loop',
      url: 'http://example.org/fhir/ValueSet/loop',
      status: 'active',
      compose: { include: [{ valueSet: ['http://example.org/fhir/ValueSet/loop'] }] },
    });
    const loop = await t.app.inject({
      headers: t.authHeaders,
      url: '/fhir/R4/ValueSet/$expand?url=http://example.org/fhir/ValueSet/loop',
    });
    expect(loop.statusCode).toBe(422);
    expect(loop.json().issue[0].details.text).toContain('includes itself');
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/ValueSet/$expand',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({
        resourceType: 'ValueSet',
        status: 'active',
        compose: { include: [{ system: 'http://snomed.info/sct' }] },
      }),
    });
    expect(unknown.statusCode).toBe(422);
    const regex = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/ValueSet/$expand',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({
        resourceType: 'ValueSet',
        status: 'active',
        compose: { include: [{ system: SYSTEM, filter: [{ property: 'code', op: 'regex', value: '([a-z' }] }] },
      }),
    });
    expect(regex.statusCode).toBe(400);
  });

  it('re-indexes on update and forgets on delete', async () => {
    await put({ ...shapes, concept: [{ code: 'blob', display: 'Blob' }] });
    expect(await expand({ include: [{ system: SYSTEM }] })).toEqual(['blob']);
    await t.app.inject({ headers: t.authHeaders, method: 'DELETE', url: '/fhir/R4/CodeSystem/shapes' });
    const gone = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/ValueSet/$expand',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({
        resourceType: 'ValueSet',
        status: 'active',
        compose: { include: [{ system: SYSTEM }] },
      }),
    });
    expect(gone.statusCode).toBe(422);
    await put(shapes);
  });
});

describe('functions for search and validation', () => {
  const scope = () => ({ projects: [t.testProject.projectId, t.services.superAdminProjectId] });

  it('expandCodes and valueSetMembersSql give a value set’s codes', async () => {
    const codes = await expandCodes(t.pool, scope(), 'http://hl7.org/fhir/ValueSet/administrative-gender');
    expect(codes?.map((c) => c.code)).toEqual(['male', 'female', 'other', 'unknown']);
    expect(await expandCodes(t.pool, scope(), 'http://example.org/unknown')).toBeUndefined();
    const sql = await valueSetMembersSql(t.pool, scope(), 'http://example.org/fhir/ValueSet/four-sided', 1);
    expect(sql).toBeDefined();
    const rows = await t.pool.query(`SELECT $1::text AS x, m.code FROM (${sql?.sql}) m ORDER BY m.code`, [
      'x',
      ...(sql?.params ?? []),
    ]);
    expect(rows.rows.map((r) => r.code)).toEqual(['quadrilateral', 'rectangle', 'square']);
  });

  it('subsumedCodes answers below and above', async () => {
    expect((await subsumedCodes(t.pool, scope(), SYSTEM, 'quadrilateral', 'below'))?.sort()).toEqual([
      'quadrilateral',
      'rectangle',
      'square',
    ]);
    expect((await subsumedCodes(t.pool, scope(), SYSTEM, 'square', 'above'))?.sort()).toEqual([
      'polygon',
      'quadrilateral',
      'shape',
      'square',
    ]);
    expect(await subsumedCodes(t.pool, scope(), 'http://snomed.info/sct', '123', 'below')).toBeUndefined();
  });

  it('validateCode and the binding checker answer true, false, or undefined when they cannot tell', async () => {
    const gender = 'http://hl7.org/fhir/ValueSet/administrative-gender';
    expect(await validateCode(t.pool, scope(), gender, 'http://hl7.org/fhir/administrative-gender', 'male')).toBe(true);
    expect(await validateCode(t.pool, scope(), gender, undefined, 'female')).toBe(true);
    expect(await validateCode(t.pool, scope(), gender, undefined, 'mail')).toBe(false);
    expect(await validateCode(t.pool, scope(), 'http://example.org/unknown', undefined, 'x')).toBeUndefined();
    const bindings = t.services.terminology.bindings;
    expect(bindings.validateCodeCached(gender, undefined, 'male')).toBeUndefined();
    await bindings.preload([gender, 'http://hl7.org/fhir/ValueSet/observation-status']);
    expect(bindings.validateCodeCached(gender, undefined, 'male')).toBe(true);
    expect(bindings.validateCodeCached(gender, 'http://example.org/other', 'male')).toBe(false);
    expect(await bindings.validateCode('http://hl7.org/fhir/ValueSet/observation-status', undefined, 'final')).toBe(
      true,
    );
    expect(await bindings.validateCode('http://hl7.org/fhir/ValueSet/observation-status', undefined, 'done')).toBe(
      false,
    );
  });
});
