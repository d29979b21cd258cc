import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

const FHIR = 'application/fhir+json';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function get(url: string) {
  return t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/${url}` });
}

async function post(url: string, body: object) {
  return t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${url}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify(body),
  });
}

function codes(valueSet: { expansion: { contains?: { code: string }[] } }): string[] {
  return (valueSet.expansion.contains ?? []).map((c) => c.code);
}

describe('ValueSet/$expand on the R4 value sets', () => {
  it('expands administrative-gender by url in definition order', async () => {
    const res = await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/administrative-gender');
    expect(res.statusCode).toBe(200);
    const vs = res.json();
    expect(vs.resourceType).toBe('ValueSet');
    expect(vs.url).toBe('http://hl7.org/fhir/ValueSet/administrative-gender');
    expect(vs.expansion.total).toBe(4);
    expect(codes(vs)).toEqual(['male', 'female', 'other', 'unknown']);
    expect(vs.expansion.contains[0]).toMatchObject({
      system: 'http://hl7.org/fhir/administrative-gender',
      code: 'male',
      display: 'Male',
    });
    expect(vs.expansion.identifier).toMatch(/^urn:uuid:/);
  });

  it('expands by id at instance level', async () => {
    const res = await get('ValueSet/observation-status/$expand');
    expect(res.statusCode).toBe(200);
    expect(codes(res.json())).toContain('final');
    expect(res.json().expansion.total).toBe(8);
  });

  it('filters by display text, with prefix matches first', async () => {
    const res = await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/observation-status&filter=amend');
    const vs = res.json();
    expect(codes(vs)).toEqual(['amended']);
    const two = (
      await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/administrative-gender&filter=MAL')
    ).json();
    // "Male" starts with the text; "Female" only contains it.
    expect(codes(two)).toEqual(['male', 'female']);
  });

  it('pages with count and offset, keeping the total', async () => {
    const first = (await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/observation-status&count=3')).json();
    const second = (
      await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/observation-status&count=3&offset=3')
    ).json();
    const all = (await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/observation-status')).json();
    expect(first.expansion.total).toBe(8);
    expect(second.expansion.offset).toBe(3);
    expect([...codes(first), ...codes(second)]).toEqual(codes(all).slice(0, 6));
    const beyond = (
      await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/observation-status&count=3&offset=30')
    ).json();
    expect(beyond.expansion.total).toBe(8);
    expect(beyond.expansion.contains).toBeUndefined(); // FHIR JSON has no empty arrays
  });

  it('expands a whole hierarchical v3 code system and an is-a filter over it', async () => {
    const all = (await get('ValueSet/$expand?url=http://terminology.hl7.org/ValueSet/v3-ActCode&count=5')).json();
    expect(all.expansion.total).toBeGreaterThan(1000);
    const res = await post('ValueSet/$expand', {
      resourceType: 'Parameters',
      parameter: [
        {
          name: 'valueSet',
          resource: {
            resourceType: 'ValueSet',
            status: 'active',
            compose: {
              include: [
                {
                  system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode',
                  filter: [{ property: 'concept', op: 'is-a', value: '_ActAccountCode' }],
                },
              ],
            },
          },
        },
      ],
    });
    expect(res.statusCode).toBe(200);
    const got = codes(res.json());
    expect(got).toContain('_ActAccountCode');
    expect(got).toContain('CC');
    expect(got).toContain('AE'); // grandchild: credit card → American Express
    expect(got).not.toContain('_ActAdjudicationCode');
    const abstract = res.json().expansion.contains.find((c: { code: string }) => c.code === '_ActAccountCode');
    expect(abstract.abstract).toBe(true);
  });

  it('expands the HL7 v2 tables and v3 code systems of the definitions package', async () => {
    const v2 = await get('ValueSet/$expand?url=http://terminology.hl7.org/ValueSet/v2-0001');
    expect(v2.statusCode).toBe(200);
    expect(codes(v2.json())).toEqual(expect.arrayContaining(['F', 'M', 'U']));
    expect(v2.json().expansion.contains[0].system).toBe('http://terminology.hl7.org/CodeSystem/v2-0001');
    const lookup = await get('CodeSystem/$lookup?system=http://terminology.hl7.org/CodeSystem/v2-0001&code=F');
    expect(lookup.json().parameter.find((p: { name: string }) => p.name === 'display').valueString).toBe('Female');
    const v3 = await get('ValueSet/$expand?url=http://terminology.hl7.org/ValueSet/v3-MaritalStatus&filter=married');
    expect(codes(v3.json())).toContain('M');
  });

  it('date picks the version of a value set published on or before it', async () => {
    const url = 'http://example.org/fhir/ValueSet/dated';
    const version = (v: string, date: string, codes: string[]) =>
      post('ValueSet', {
        resourceType: 'ValueSet',
        url,
        version: v,
        date,
        status: 'active',
        compose: {
          include: [
            {
              system: 'http://hl7.org/fhir/administrative-gender',
              concept: codes.map((code) => ({ code })),
            },
          ],
        },
      });
    expect((await version('1', '2020-01-01', ['male'])).statusCode).toBe(201);
    expect((await version('2', '2023-06-01', ['male', 'female'])).statusCode).toBe(201);
    const at = async (date?: string) =>
      codes((await get(`ValueSet/$expand?url=${url}${date ? `&date=${date}` : ''}`)).json());
    expect(await at()).toEqual(['male', 'female']);
    expect(await at('2021-05-05')).toEqual(['male']);
    expect(await at('2024-01-01')).toEqual(['male', 'female']);
    const before = await get(`ValueSet/$expand?url=${url}&date=2019-01-01`);
    expect(before.statusCode).toBe(404);
    expect(before.json().resourceType).toBe('OperationOutcome');
  });

  it('answers 404 for an unknown value set and 400 without a url', async () => {
    expect((await get('ValueSet/$expand?url=http://example.org/nope')).statusCode).toBe(404);
    expect((await get('ValueSet/$expand')).statusCode).toBe(400);
    expect(
      (await get('ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/administrative-gender&count=x')).statusCode,
    ).toBe(400);
  });
});
