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

interface Param {
  name: string;
  part?: Param[];
  valueCoding?: { system?: string; code?: string; display?: string };
  [value: string]: unknown;
}

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
function param(body: { parameter?: Param[] }, name: string): Param | undefined {
  return body.parameter?.find((p) => p.name === name);
}
function all(body: { parameter?: Param[] }, name: string): Param[] {
  return body.parameter?.filter((p) => p.name === name) ?? [];
}
function part(p: Param, name: string): Param | undefined {
  return p.part?.find((x) => x.name === name);
}

const GENDER_CS = 'http://hl7.org/fhir/administrative-gender';
const ACT_CODE = 'http://terminology.hl7.org/CodeSystem/v3-ActCode';

describe('CodeSystem/$lookup', () => {
  it('looks up a code: name, display, definition', async () => {
    const res = await get(`CodeSystem/$lookup?system=${GENDER_CS}&code=female`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.resourceType).toBe('Parameters');
    expect(param(body, 'name')?.valueString).toBeTruthy();
    expect(param(body, 'display')?.valueString).toBe('Female');
    const props = all(body, 'property').map((p) => part(p, 'code')?.valueCode);
    expect(props).toContain('definition');
  });

  it('reports parents, children and properties in a hierarchical system', async () => {
    const body = (await get(`CodeSystem/$lookup?system=${ACT_CODE}&code=CC`)).json();
    expect(param(body, 'display')?.valueString).toBe('credit card');
    const props = all(body, 'property').map((p) => [part(p, 'code')?.valueCode, part(p, 'value')?.valueCode]);
    expect(props).toContainEqual(['parent', '_ActAccountCode']);
    expect(props).toContainEqual(['child', 'AE']);
    const onlyParent = (await get(`CodeSystem/$lookup?system=${ACT_CODE}&code=CC&property=parent`)).json();
    expect(all(onlyParent, 'property').every((p) => part(p, 'code')?.valueCode === 'parent')).toBe(true);
  });

  it('takes a coding in a POSTed Parameters, and an instance id', async () => {
    const res = await post('CodeSystem/$lookup', {
      resourceType: 'Parameters',
      parameter: [{ name: 'coding', valueCoding: { system: GENDER_CS, code: 'other' } }],
    });
    expect(param(res.json(), 'display')?.valueString).toBe('Other');
    const inst = await get('CodeSystem/administrative-gender/$lookup?code=male');
    expect(param(inst.json(), 'display')?.valueString).toBe('Male');
  });

  it('answers 404 for an unknown code or system and 400 without a code', async () => {
    expect((await get(`CodeSystem/$lookup?system=${GENDER_CS}&code=nope`)).statusCode).toBe(404);
    expect((await get('CodeSystem/$lookup?system=http://example.org/x&code=a')).statusCode).toBe(404);
    const noCode = await get(`CodeSystem/$lookup?system=${GENDER_CS}`);
    expect(noCode.statusCode).toBe(400);
    expect(noCode.json().issue[0].expression).toEqual(['code']);
  });
});

describe('$validate-code', () => {
  it('validates a code against a value set, with its display', async () => {
    const ok = (
      await get(
        `ValueSet/$validate-code?url=http://hl7.org/fhir/ValueSet/administrative-gender&system=${GENDER_CS}&code=male`,
      )
    ).json();
    expect(param(ok, 'result')?.valueBoolean).toBe(true);
    expect(param(ok, 'display')?.valueString).toBe('Male');
    const bad = (
      await get(
        `ValueSet/$validate-code?url=http://hl7.org/fhir/ValueSet/administrative-gender&system=${GENDER_CS}&code=x`,
      )
    ).json();
    expect(param(bad, 'result')?.valueBoolean).toBe(false);
    expect(param(bad, 'message')?.valueString).toContain('not in the value set');
  });

  it('checks the display and accepts a codeableConcept when any coding is valid', async () => {
    const wrongDisplay = (
      await get(
        `ValueSet/observation-status/$validate-code?system=http://hl7.org/fhir/observation-status&code=final&display=Draft`,
      )
    ).json();
    expect(param(wrongDisplay, 'result')?.valueBoolean).toBe(false);
    expect(param(wrongDisplay, 'display')?.valueString).toBe('Final');
    const cc = await post('ValueSet/$validate-code', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'url', valueUri: 'http://hl7.org/fhir/ValueSet/administrative-gender' },
        {
          name: 'codeableConcept',
          valueCodeableConcept: {
            coding: [
              { system: 'http://example.org', code: 'zz' },
              { system: GENDER_CS, code: 'unknown' },
            ],
          },
        },
      ],
    });
    expect(param(cc.json(), 'result')?.valueBoolean).toBe(true);
  });

  it('treats abstract codes as invalid in a value set unless abstract=true', async () => {
    const url = `ValueSet/$validate-code?url=http://terminology.hl7.org/ValueSet/v3-ActCode&system=${ACT_CODE}&code=_ActAccountCode`;
    expect(param((await get(url)).json(), 'result')?.valueBoolean).toBe(false);
    expect(param((await get(`${url}&abstract=true`)).json(), 'result')?.valueBoolean).toBe(true);
  });

  it('validates against a code system, by url or inline', async () => {
    const ok = (await get(`CodeSystem/$validate-code?url=${ACT_CODE}&code=AE`)).json();
    expect(param(ok, 'result')?.valueBoolean).toBe(true);
    expect(param(ok, 'display')?.valueString).toBe('American Express');
    const bad = (await get(`CodeSystem/$validate-code?url=${ACT_CODE}&code=NOPE`)).json();
    expect(param(bad, 'result')?.valueBoolean).toBe(false);
    const inline = await post('CodeSystem/$validate-code', {
      resourceType: 'Parameters',
      parameter: [
        {
          name: 'codeSystem',
          resource: {
            resourceType: 'CodeSystem',
            url: 'http://example.org/cs',
            status: 'active',
            content: 'complete',
            concept: [{ code: 'a', display: 'Alpha', concept: [{ code: 'b', display: 'Beta' }] }],
          },
        },
        { name: 'code', valueCode: 'b' },
      ],
    });
    expect(param(inline.json(), 'result')?.valueBoolean).toBe(true);
  });
});

describe('CodeSystem/$subsumes', () => {
  it('relates two codes of a hierarchy', async () => {
    const outcome = async (a: string, b: string) =>
      param((await get(`CodeSystem/$subsumes?system=${ACT_CODE}&codeA=${a}&codeB=${b}`)).json(), 'outcome')?.valueCode;
    expect(await outcome('_ActAccountCode', 'AE')).toBe('subsumes');
    expect(await outcome('AE', 'CC')).toBe('subsumed-by');
    expect(await outcome('CC', 'CC')).toBe('equivalent');
    expect(await outcome('AE', 'CASH')).toBe('not-subsumed');
  });

  it('takes codings and answers 404 for an unknown code', async () => {
    const res = await post('CodeSystem/$subsumes', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'codingA', valueCoding: { system: ACT_CODE, code: 'CC' } },
        { name: 'codingB', valueCoding: { system: ACT_CODE, code: 'DN' } },
      ],
    });
    expect(param(res.json(), 'outcome')?.valueCode).toBe('subsumes');
    expect((await get(`CodeSystem/$subsumes?system=${ACT_CODE}&codeA=CC&codeB=NOPE`)).statusCode).toBe(404);
  });
});

describe('ConceptMap/$translate', () => {
  it('translates through an R4 concept map by url', async () => {
    const res = await get(
      `ConceptMap/$translate?url=http://hl7.org/fhir/ConceptMap/cm-administrative-gender-v2&system=${GENDER_CS}&code=other`,
    );
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(param(body, 'result')?.valueBoolean).toBe(true);
    const matches = all(body, 'match');
    expect(matches.map((m) => part(m, 'concept')?.valueCoding)).toEqual([
      { system: 'http://terminology.hl7.org/CodeSystem/v2-0001', code: 'A' },
      { system: 'http://terminology.hl7.org/CodeSystem/v2-0001', code: 'O' },
    ]);
    expect(part(matches[0], 'equivalence')?.valueCode).toBe('wider');
    expect(part(matches[0], 'source')?.valueUri).toBe(
      'http://hl7.org/fhir/ConceptMap/cm-administrative-gender-v2|4.0.1',
    );
  });

  it('finds the maps by source system and target system when no url is given', async () => {
    const body = (
      await get(
        `ConceptMap/$translate?system=${GENDER_CS}&code=female&targetsystem=http://terminology.hl7.org/CodeSystem/v3-AdministrativeGender`,
      )
    ).json();
    expect(param(body, 'result')?.valueBoolean).toBe(true);
    expect(all(body, 'match').map((m) => part(m, 'concept')?.valueCoding?.code)).toEqual(['F']);
  });

  it('reverses, applies unmapped rules, and reports no match', async () => {
    const reverse = (
      await get(
        `ConceptMap/$translate?url=http://hl7.org/fhir/ConceptMap/cm-administrative-gender-v2&system=http://terminology.hl7.org/CodeSystem/v2-0001&code=M&reverse=true`,
      )
    ).json();
    expect(all(reverse, 'match').map((m) => part(m, 'concept')?.valueCoding?.code)).toEqual(['male']);
    // ConceptMap/101 maps unmapped address-use codes to a fixed "temp".
    const fixed = (await get(`ConceptMap/101/$translate?system=http://hl7.org/fhir/address-use&code=billing`)).json();
    expect(param(fixed, 'result')?.valueBoolean).toBe(true);
    expect(part(all(fixed, 'match')[0], 'concept')?.valueCoding?.code).toBe('temp');
    const disjoint = (await get(`ConceptMap/101/$translate?system=http://hl7.org/fhir/address-use&code=old`)).json();
    expect(param(disjoint, 'result')?.valueBoolean).toBe(false);
    const none = (
      await get(
        `ConceptMap/$translate?url=http://hl7.org/fhir/ConceptMap/cm-administrative-gender-v2&system=${GENDER_CS}&code=zz`,
      )
    ).json();
    expect(param(none, 'result')?.valueBoolean).toBe(false);
    expect(param(none, 'message')?.valueString).toContain('No mapping');
  });

  it('translates with a project ConceptMap indexed on write, and an inline one', async () => {
    const map = {
      resourceType: 'ConceptMap',
      url: 'http://example.org/cm/local-to-loinc',
      status: 'active',
      group: [
        {
          source: 'http://example.org/local',
          target: 'http://loinc.org',
          element: [{ code: 'GLU', target: [{ code: '2345-7', display: 'Glucose', equivalence: 'equivalent' }] }],
        },
      ],
    };
    expect((await post('ConceptMap', map)).statusCode).toBe(201);
    const stored = (
      await get(
        'ConceptMap/$translate?url=http://example.org/cm/local-to-loinc&system=http://example.org/local&code=GLU',
      )
    ).json();
    expect(part(all(stored, 'match')[0], 'concept')?.valueCoding).toEqual({
      system: 'http://loinc.org',
      code: '2345-7',
      display: 'Glucose',
    });
    const inline = await post('ConceptMap/$translate', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'conceptMap', resource: { ...map, url: 'http://example.org/cm/inline' } },
        { name: 'coding', valueCoding: { system: 'http://example.org/local', code: 'GLU' } },
      ],
    });
    expect(param(inline.json(), 'result')?.valueBoolean).toBe(true);
    expect((await get('ConceptMap/$translate?system=http://example.org/local')).statusCode).toBe(400);
  });
});
