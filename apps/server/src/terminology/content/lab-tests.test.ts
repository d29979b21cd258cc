import { LAB_ANALYTES, LAB_TESTS, LAB_TESTS_VALUE_SET, LOINC } from '@hearth/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { LAB_TESTS_TERMINOLOGY } from './lab-tests.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string) => t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/${url}` });
const post = (url: string, body: object) =>
  t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${url}`,
    headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
    payload: JSON.stringify(body),
  });

describe('the lab-tests terminology part', () => {
  it('is a LOINC fragment whose panels name only analytes it holds, each quantitative one with a UCUM unit', () => {
    const system = LAB_TESTS_TERMINOLOGY.entry?.[0].resource as unknown as {
      url: string;
      content: string;
      concept: object[];
    };
    expect(system).toMatchObject({ url: LOINC, content: 'fragment' });
    for (const test of LAB_TESTS) {
      expect(test.code).toMatch(/^\d{1,6}-\d$/);
      for (const code of test.analytes) expect(LAB_ANALYTES[code], `${test.code} reports ${code}`).toBeDefined();
    }
    for (const analyte of Object.values(LAB_ANALYTES)) {
      expect(analyte.unit !== undefined || analyte.normalText !== undefined, analyte.code).toBe(true);
    }
  });

  it('finds orderables by type-ahead and leaves analytes out of the orderables', async () => {
    const res = await get(`ValueSet/$expand?url=${encodeURIComponent(LAB_TESTS_VALUE_SET)}&filter=lipid&count=10`);
    expect(res.statusCode).toBe(200);
    const codes = (res.json().expansion.contains as { code: string }[]).map((c) => c.code).sort();
    expect(codes).toEqual(['24331-1', '57698-3']);
    const cbc = await get(`ValueSet/$expand?url=${encodeURIComponent(LAB_TESTS_VALUE_SET)}&filter=CBC`);
    expect(cbc.json().expansion.contains).toEqual([
      expect.objectContaining({ system: LOINC, code: '58410-2', display: 'CBC panel - Blood by Automated count' }),
    ]);
    const mcv = await get(`ValueSet/$expand?url=${encodeURIComponent(LAB_TESTS_VALUE_SET)}&filter=MCV`);
    expect(mcv.json().expansion.contains ?? []).toEqual([]);
  });

  it('judges displays of the codes it holds in $validate (common names accepted), not other LOINC codes', async () => {
    const errors = async (code: string, display: string) => {
      const res = await post('Observation/$validate', {
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: LOINC, code, display }] },
      });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { issue: { severity: string; diagnostics?: string; details?: { text?: string } }[] }).issue
        .filter((i) => i.severity === 'error')
        .map((i) => i.details?.text ?? i.diagnostics);
    };
    expect(await errors('2345-7', 'Glucose [Mass/volume] in Serum or Plasma')).toEqual([]);
    expect(await errors('2345-7', 'Glucose')).toEqual([]);
    expect(await errors('58410-2', 'Complete blood count (hemogram) panel - Blood by Automated count')).toEqual([]);
    expect(await errors('99999-9', 'Anything at all')).toEqual([]);
    expect((await errors('718-7', 'Platelets')).join()).toContain(
      'Wrong display "Platelets" for http://loinc.org#718-7',
    );
  });
});
