import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { allergensOf, MEDICATION_ALLERGENS_MAP, MEDICATIONS_VALUE_SET, RXNORM, SNOMED } from './medications.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

interface Match {
  name: string;
  valueCoding?: { system: string; code: string };
  part?: Match[];
}

async function translate(code: string): Promise<{ system: string; code: string }[]> {
  const res = await t.app.inject({
    headers: t.authHeaders,
    url: `/fhir/R4/ConceptMap/$translate?url=${encodeURIComponent(MEDICATION_ALLERGENS_MAP)}&system=${encodeURIComponent(RXNORM)}&code=${code}`,
  });
  expect(res.statusCode).toBe(200);
  const matches = (res.json().parameter as Match[]).filter((p) => p.name === 'match');
  return matches.map((m) => m.part?.find((p) => p.name === 'concept')?.valueCoding as { system: string; code: string });
}

describe('the medications terminology part', () => {
  it('expands the medications value set by what is typed (type-ahead)', async () => {
    const res = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/ValueSet/$expand?url=${encodeURIComponent(MEDICATIONS_VALUE_SET)}&filter=amoxi`,
    });
    expect(res.statusCode).toBe(200);
    const contains = res.json().expansion.contains as { system: string; code: string; display: string }[];
    expect(contains.map((c) => c.code).sort()).toEqual(['308182', '308191', '308192', '562251']);
    expect(contains.find((c) => c.code === '308191')).toEqual({
      system: RXNORM,
      code: '308191',
      display: 'amoxicillin 500 MG Oral Capsule',
    });
    // Ingredients are in the code system but not offered for prescribing.
    const all = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/ValueSet/$expand?url=${encodeURIComponent(MEDICATIONS_VALUE_SET)}&filter=lisinopril`,
    });
    expect((all.json().expansion.contains as { code: string }[]).map((c) => c.code).sort()).toEqual([
      '314076',
      '314077',
    ]);
  });

  it("looks up a drug's ingredients as properties", async () => {
    const res = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/CodeSystem/$lookup?system=${encodeURIComponent(RXNORM)}&code=562251&property=has_ingredient`,
    });
    expect(res.statusCode).toBe(200);
    const props = (res.json().parameter as Match[])
      .filter((p) => p.name === 'property')
      .map((p) => p.part?.find((q) => q.name === 'value') as unknown as { valueCode?: string })
      .map((v) => v?.valueCode);
    expect(props.sort()).toEqual(['48203', '723']);
  });

  it('maps amoxicillin to the penicillin class, penicillin V too, and ibuprofen not', async () => {
    const amoxicillin = await translate('308191');
    expect(amoxicillin).toEqual(
      expect.arrayContaining([
        { system: RXNORM, code: '723', display: 'amoxicillin' },
        expect.objectContaining({ system: SNOMED, code: '372687004' }),
        expect.objectContaining({ system: SNOMED, code: '373270004' }),
      ]),
    );
    expect((await translate('834061')).map((c) => c.code)).toEqual(expect.arrayContaining(['7984', '373270004']));
    const ibuprofen = (await translate('310965')).map((c) => c.code);
    expect(ibuprofen).toEqual(expect.arrayContaining(['5640', '387207008']));
    expect(ibuprofen).not.toContain('373270004');
    // The module's own function agrees with what the server serves.
    expect(allergensOf('308191').map((a) => a.code)).toEqual(amoxicillin.map((c) => c.code));
  });

  it('offers atorvastatin, sertraline and ferrous sulfate by name, each with its ingredient', async () => {
    const expand = async (filter: string) => {
      const res = await t.app.inject({
        headers: t.authHeaders,
        url: `/fhir/R4/ValueSet/$expand?url=${encodeURIComponent(MEDICATIONS_VALUE_SET)}&filter=${encodeURIComponent(filter)}`,
      });
      expect(res.statusCode).toBe(200);
      return (res.json().expansion.contains as { code: string; display: string }[])
        .map((c) => `${c.code} ${c.display}`)
        .sort();
    };
    expect(await expand('atorva')).toEqual([
      '259255 atorvastatin 80 MG Oral Tablet',
      '617310 atorvastatin 20 MG Oral Tablet',
      '617312 atorvastatin 10 MG Oral Tablet',
    ]);
    expect(await expand('sertra')).toEqual([
      '312938 sertraline 100 MG Oral Tablet',
      '312940 sertraline 25 MG Oral Tablet',
      '312941 sertraline 50 MG Oral Tablet',
    ]);
    expect(await expand('ferrous')).toEqual(['310325 ferrous sulfate 325 MG Oral Tablet']);
    expect((await translate('617310')).map((c) => c.code)).toEqual(['83367']);
    expect((await translate('312941')).map((c) => c.code)).toEqual(['36437']);
    expect((await translate('310325')).map((c) => c.code)).toEqual(['24947']);
  });

  it('every drug of the value set names at least one ingredient', () => {
    expect(allergensOf('0')).toEqual([]);
    expect(allergensOf('860975').map((a) => a.code)).toEqual(['6809']);
  });
});
