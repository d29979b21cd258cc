// _summary and _elements on read (hl7.org/fhir/R4/search.html#summary, #elements), from the definitions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

let t: TestApp;
let id: string;
let obsId: string;

beforeAll(async () => {
  t = await createTestApp();
  const create = (resource: object) =>
    t.app.inject({
      method: 'POST',
      url: `/fhir/R4/${(resource as { resourceType: string }).resourceType}`,
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: JSON.stringify(resource),
    });
  id = (
    await create({
      resourceType: 'Patient',
      text: { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">Ann</div>' },
      name: [{ family: 'Summary', given: ['Ann'] }],
      gender: 'female',
      birthDate: '1980-02-03',
      maritalStatus: { text: 'married' },
      photo: [{ contentType: 'image/png', url: 'http://example.org/p.png' }],
      communication: [{ language: { text: 'English' } }],
    })
  ).json().id;
  obsId = (
    await create({
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'x' },
      valueString: 'v',
      note: [{ text: 'n' }],
    })
  ).json().id;
});
afterAll(async () => {
  await t?.close();
});

const read = async (query: string, type = 'Patient', rid = id) =>
  (await t.app.inject({ url: `/fhir/R4/${type}/${rid}?${query}`, headers: t.authHeaders })).json();

const isSubsetted = (r: { meta?: { tag?: { code: string }[] } }) => r.meta?.tag?.some((c) => c.code === 'SUBSETTED');

describe('_summary and _elements', () => {
  it('_summary=true keeps the summary elements of the definition and marks the result SUBSETTED', async () => {
    const r = await read('_summary=true');
    expect(Object.keys(r).sort()).toEqual(['birthDate', 'gender', 'id', 'meta', 'name', 'resourceType']);
    expect(isSubsetted(r)).toBe(true);
  });

  it('_summary=text keeps text, id, meta and mandatory elements; _summary=data drops text', async () => {
    const text = await read('_summary=text');
    expect(Object.keys(text).sort()).toEqual(['id', 'meta', 'resourceType', 'text']);
    const data = await read('_summary=data');
    expect(data.text).toBeUndefined();
    expect(data.photo).toHaveLength(1);
    const obs = await read('_summary=text', 'Observation', obsId);
    // status and code are mandatory (min 1) in Observation: kept.
    expect(Object.keys(obs).sort()).toEqual(['code', 'id', 'meta', 'resourceType', 'status']);
  });

  it('_elements keeps the named elements (and the mandatory ones)', async () => {
    const r = await read('_elements=gender,photo');
    expect(Object.keys(r).sort()).toEqual(['gender', 'id', 'meta', 'photo', 'resourceType']);
    expect(isSubsetted(r)).toBe(true);
    const obs = await read('_elements=valueString', 'Observation', obsId);
    expect(Object.keys(obs).sort()).toEqual(['code', 'id', 'meta', 'resourceType', 'status', 'valueString']);
  });

  it('_summary=false and no parameter answer the whole resource; a bad value is a 400', async () => {
    const full = await read('_summary=false');
    expect(full.photo).toHaveLength(1);
    expect(isSubsetted(full)).toBeFalsy();
    const bad = await t.app.inject({ url: `/fhir/R4/Patient/${id}?_summary=most`, headers: t.authHeaders });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().resourceType).toBe('OperationOutcome');
  });
});
