/** $evaluate-measure with FHIRPath criteria against a real server: scorings, strata, supplemental data, access, errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember } from '../test/auth.js';

const FHIR = 'application/fhir+json';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let t: TestApp;

async function post(resource: Json, headers = t.authHeaders): Promise<Json> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType as string}`,
    headers: { ...headers, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

async function call(url: string, headers = t.authHeaders, body?: Json): Promise<{ status: number; body: Json }> {
  const res = await t.app.inject({
    method: body ? 'POST' : 'GET',
    url: `/fhir/R4/${url}`,
    headers: body ? { ...headers, 'content-type': FHIR } : headers,
    payload: body,
  });
  return { status: res.statusCode, body: res.json() };
}

const fp = (expression: string) => ({ language: 'text/fhirpath', expression });
const pop = (code: string, expression: string, extra: Json = {}) => ({
  code: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/measure-population', code }] },
  criteria: fp(expression),
  ...extra,
});
const scoring = (code: string) => ({
  coding: [{ system: 'http://terminology.hl7.org/CodeSystem/measure-scoring', code }],
});

const DIABETES = "%resources.ofType(Condition).where(code.coding.code = '44054006').exists()";
const HBA1C =
  "%resources.ofType(Observation).where(code.coding.code = '4548-4' and effective >= %periodStart and effective <= %periodEnd)";
const PERIOD = 'periodStart=2019-01-01&periodEnd=2019-12-31';

let ids: Record<'a' | 'b' | 'c' | 'd', string>;
let proportion: Json;

function counts(report: Json, group = 0): Record<string, number> {
  return Object.fromEntries(
    (report.group[group].population as Json[]).map((p) => [p.code.coding[0].code as string, p.count as number]),
  );
}

beforeAll(async () => {
  t = await createTestApp();
  const patient = async (gender: string, birthDate: string, diabetes: boolean, hba1c?: number, when = '2019-06-01') => {
    const p = await post({ resourceType: 'Patient', gender, birthDate });
    const subject = { reference: `Patient/${p.id as string}` };
    if (diabetes) {
      await post({
        resourceType: 'Condition',
        subject,
        code: { coding: [{ system: 'http://snomed.info/sct', code: '44054006' }] },
      });
    }
    if (hba1c !== undefined) {
      await post({
        resourceType: 'Observation',
        status: 'final',
        subject,
        code: { coding: [{ system: 'http://loinc.org', code: '4548-4' }] },
        effectiveDateTime: `${when}T10:00:00Z`,
        valueQuantity: { value: hba1c, unit: '%', system: 'http://unitsofmeasure.org', code: '%' },
      });
    }
    return p.id as string;
  };
  ids = {
    a: await patient('female', '1950-03-01', true, 10),
    b: await patient('male', '1960-03-01', true, 7),
    c: await patient('female', '1970-03-01', true, 12, '2018-06-01'), // outside the period
    d: await patient('male', '2010-03-01', false),
  };
  proportion = await post({
    resourceType: 'Measure',
    status: 'active',
    url: 'http://example.org/Measure/hba1c-tested',
    version: '1',
    scoring: scoring('proportion'),
    group: [
      {
        id: 'main',
        population: [
          pop('initial-population', DIABETES),
          pop('denominator', 'true'),
          pop('denominator-exclusion', 'birthDate < @1955-01-01'),
          pop('numerator', `${HBA1C}.where(value.value >= 7).exists()`),
        ],
        stratifier: [{ id: 'by-gender', criteria: fp('gender') }],
      },
    ],
    supplementalData: [{ id: 'sde-sex', criteria: fp('gender') }],
  });
});

afterAll(async () => {
  await t?.close();
});

describe('Measure/$evaluate-measure with FHIRPath criteria', () => {
  it('summary: proportion counts with exclusions, score, strata and supplemental data', async () => {
    const { status, body } = await call(`Measure/${proportion.id as string}/$evaluate-measure?${PERIOD}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      resourceType: 'MeasureReport',
      status: 'complete',
      type: 'summary',
      measure: 'http://example.org/Measure/hba1c-tested|1',
      period: { start: '2019-01-01', end: '2019-12-31' },
    });
    // a: excluded (born before 1955); b: numerator; c: HbA1c outside the period; d: not diabetic.
    expect(counts(body)).toEqual({ 'initial-population': 3, denominator: 2, 'denominator-exclusion': 1, numerator: 1 });
    expect(body.group[0].measureScore.value).toBe(0.5);
    const strata = Object.fromEntries(
      (body.group[0].stratifier[0].stratum as Json[]).map((s) => [
        s.value.text,
        Object.fromEntries((s.population as Json[]).map((p) => [p.code.coding[0].code, p.count])),
      ]),
    );
    expect(strata).toEqual({
      female: { 'initial-population': 2, denominator: 1, 'denominator-exclusion': 1, numerator: 0 },
      male: { 'initial-population': 1, denominator: 1, 'denominator-exclusion': 0, numerator: 1 },
    });
    const sde = (body.contained as Json[]).map((o) => [o.code.text, o.valueInteger]);
    expect(sde.sort()).toEqual([
      ['female', 2],
      ['male', 1],
    ]);
    expect(body.evaluatedResource).toHaveLength(2);
  });

  it('individual and subject-list reports', async () => {
    const one = await call(`Measure/${proportion.id as string}/$evaluate-measure?${PERIOD}&subject=Patient/${ids.b}`);
    expect(one.status).toBe(200);
    expect(one.body.type).toBe('individual');
    expect(one.body.subject).toEqual({ reference: `Patient/${ids.b}` });
    expect(counts(one.body)).toEqual({
      'initial-population': 1,
      denominator: 1,
      'denominator-exclusion': 0,
      numerator: 1,
    });
    expect(one.body.contained[0]).toMatchObject({ code: { text: 'sde-sex' }, valueCodeableConcept: { text: 'male' } });

    const list = await call(`Measure/${proportion.id as string}/$evaluate-measure?${PERIOD}&reportType=subject-list`);
    expect(list.body.type).toBe('subject-list');
    const members = (code: string) => {
      const p = (list.body.group[0].population as Json[]).find((x) => x.code.coding[0].code === code);
      const l = (list.body.contained as Json[]).find((r) => `#${r.id as string}` === p?.subjectResults.reference);
      return (l?.entry as Json[]).map((e) => e.item.reference).sort();
    };
    expect(members('initial-population')).toEqual([ids.a, ids.b, ids.c].map((i) => `Patient/${i}`).sort());
    expect(members('numerator')).toEqual([`Patient/${ids.b}`]);
  });

  it('ratio, cohort and continuous-variable scoring', async () => {
    const measure = await post({
      resourceType: 'Measure',
      status: 'active',
      group: [
        {
          extension: [
            {
              url: 'http://hl7.org/fhir/us/cqfmeasures/StructureDefinition/cqfm-scoring',
              valueCodeableConcept: scoring('ratio'),
            },
          ],
          population: [
            pop('initial-population', DIABETES),
            pop('denominator', 'true'),
            pop('numerator', `${HBA1C}.exists()`),
          ],
        },
        {
          extension: [
            {
              url: 'http://hl7.org/fhir/us/cqfmeasures/StructureDefinition/cqfm-scoring',
              valueCodeableConcept: scoring('cohort'),
            },
          ],
          population: [pop('initial-population', "gender = 'male'")],
        },
        {
          extension: [
            {
              url: 'http://hl7.org/fhir/us/cqfmeasures/StructureDefinition/cqfm-scoring',
              valueCodeableConcept: scoring('continuous-variable'),
            },
          ],
          population: [
            pop('initial-population', DIABETES),
            pop('measure-population', 'true'),
            pop('measure-observation', "%resources.ofType(Observation).where(code.coding.code = '4548-4').value.value"),
          ],
        },
        {
          extension: [
            {
              url: 'http://hl7.org/fhir/us/cqfmeasures/StructureDefinition/cqfm-scoring',
              valueCodeableConcept: scoring('continuous-variable'),
            },
          ],
          population: [
            pop('initial-population', DIABETES),
            pop('measure-population', 'true'),
            pop(
              'measure-observation',
              "%resources.ofType(Observation).where(code.coding.code = '4548-4').value.value",
              {
                extension: [
                  {
                    url: 'http://hl7.org/fhir/us/cqfmeasures/StructureDefinition/cqfm-aggregateMethod',
                    valueCode: 'max',
                  },
                ],
              },
            ),
          ],
        },
      ],
    });
    const { status, body } = await call(`Measure/${measure.id as string}/$evaluate-measure?${PERIOD}`);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(counts(body, 0)).toEqual({ 'initial-population': 3, denominator: 3, numerator: 2 });
    expect(body.group[0].measureScore.value).toBeCloseTo(2 / 3, 5);
    expect(counts(body, 1)).toEqual({ 'initial-population': 2 });
    expect(body.group[1].measureScore).toBeUndefined();
    expect(counts(body, 2)).toEqual({ 'initial-population': 3, 'measure-population': 3 });
    expect(body.group[2].measureScore.value).toBeCloseTo((10 + 7 + 12) / 3, 5);
    expect(body.group[3].measureScore.value).toBe(12);
  });

  it("evaluates only the patients and data the caller's access policy lets it read", async () => {
    const policy = await post({
      resourceType: 'AccessPolicy',
      resource: [
        { resourceType: 'Patient', criteria: 'Patient?gender=female' },
        { resourceType: 'Condition' },
        { resourceType: 'Observation' },
        { resourceType: 'Measure' },
      ],
    });
    const member = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id as string}` } } as Json,
    });
    const { status, body } = await call(
      `Measure/${proportion.id as string}/$evaluate-measure?${PERIOD}`,
      member.headers,
    );
    expect(status).toBe(200);
    expect(counts(body)).toEqual({ 'initial-population': 2, denominator: 1, 'denominator-exclusion': 1, numerator: 0 });
    // A patient it may not read is a 404, as a read would be.
    const hidden = await call(
      `Measure/${proportion.id as string}/$evaluate-measure?${PERIOD}&subject=Patient/${ids.b}`,
      member.headers,
    );
    expect(hidden.status).toBe(404);
    // Writes of the report go through the caller's repository: this policy grants no MeasureReport.
    const stored = await call(`Measure/${proportion.id as string}/$evaluate-measure`, member.headers, {
      resourceType: 'Parameters',
      parameter: [
        { name: 'periodStart', valueDate: '2019-01-01' },
        { name: 'periodEnd', valueDate: '2019-12-31' },
        { name: 'persist', valueBoolean: true },
      ],
    });
    expect(stored.status).toBe(403);
  });

  it('answers 4xx OperationOutcomes naming what is wrong', async () => {
    const expectIssue = async (url: string, status: number, text: RegExp, body?: Json) => {
      const res = await call(url, t.authHeaders, body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.resourceType).toBe('OperationOutcome');
      expect(res.body.issue[0].details.text).toMatch(text);
    };
    const id = proportion.id as string;
    await expectIssue(`Measure/${id}/$evaluate-measure?periodEnd=2019-12-31`, 400, /needs periodStart/);
    await expectIssue(`Measure/unknown/$evaluate-measure?${PERIOD}`, 404, /.+/);
    await expectIssue(`Measure/$evaluate-measure?${PERIOD}`, 400, /needs measure/);
    await expectIssue(
      `Measure/$evaluate-measure?${PERIOD}&measure=http://example.org/none`,
      422,
      /No Measure has the url/,
    );
    await expectIssue(`Measure/${id}/$evaluate-measure?${PERIOD}&persist=true`, 400, /with POST/);
    await expectIssue(`Measure/${id}/$evaluate-measure?${PERIOD}&subject=Patient/nobody`, 404, /.+/);

    const practitioner = await post({ resourceType: 'Practitioner' });
    const group = await post({
      resourceType: 'Group',
      type: 'person',
      actual: true,
      member: [{ entity: { reference: `Practitioner/${practitioner.id as string}` } }],
    });
    await expectIssue(
      `Measure/${id}/$evaluate-measure?${PERIOD}&subject=Group/${group.id as string}`,
      422,
      /Groups of Patients/,
    );

    const cqlOnly = await post({
      resourceType: 'Library',
      status: 'active',
      url: 'http://example.org/Library/no-elm',
      type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/library-type', code: 'logic-library' }] },
      content: [{ contentType: 'text/cql', data: Buffer.from('library NoElm').toString('base64') }],
    });
    expect(cqlOnly.id).toBeTruthy();
    const cqlMeasure = (library: string) => ({
      resourceType: 'Measure',
      status: 'active',
      library: [library],
      scoring: scoring('cohort'),
      group: [
        {
          population: [
            {
              code: { coding: [{ code: 'initial-population' }] },
              criteria: { language: 'text/cql.identifier', expression: 'Initial Population' },
            },
          ],
        },
      ],
    });
    const noElm = await post(cqlMeasure('http://example.org/Library/no-elm'));
    await expectIssue(
      `Measure/${noElm.id as string}/$evaluate-measure?${PERIOD}`,
      422,
      /no application\/elm\+json content/,
    );
    const missing = await post(cqlMeasure('http://example.org/Library/missing'));
    await expectIssue(`Measure/${missing.id as string}/$evaluate-measure?${PERIOD}`, 422, /No Library has the url/);

    const badLanguage = await post({
      resourceType: 'Measure',
      status: 'active',
      scoring: scoring('cohort'),
      group: [
        {
          population: [
            { ...pop('initial-population', 'x'), criteria: { language: 'text/javascript', expression: 'x' } },
          ],
        },
      ],
    });
    await expectIssue(
      `Measure/${badLanguage.id as string}/$evaluate-measure?${PERIOD}`,
      422,
      /text\/javascript is not supported/,
    );
    const badPath = await post({
      resourceType: 'Measure',
      status: 'active',
      scoring: scoring('cohort'),
      group: [{ population: [pop('initial-population', 'gender = = ')] }],
    });
    await expectIssue(`Measure/${badPath.id as string}/$evaluate-measure?${PERIOD}`, 422, /does not compile/);
    const noNumerator = await post({
      resourceType: 'Measure',
      status: 'active',
      scoring: scoring('proportion'),
      group: [{ population: [pop('initial-population', 'true'), pop('denominator', 'true')] }],
    });
    await expectIssue(
      `Measure/${noNumerator.id as string}/$evaluate-measure?${PERIOD}`,
      422,
      /no numerator population/,
    );
  });

  it('leaves out of a population report a patient whose evaluation fails, and lists it; fails an individual report', async () => {
    const odd = await post({
      resourceType: 'Patient',
      gender: 'female',
      telecom: [
        { system: 'phone', value: '1' },
        { system: 'phone', value: '2' },
      ],
    });
    const measure = await post({
      resourceType: 'Measure',
      status: 'active',
      scoring: scoring('cohort'),
      // single() fails on a patient with two telecoms.
      group: [{ population: [pop('initial-population', "telecom.value.single().exists() or gender = 'male'")] }],
    });
    const summary = await call(`Measure/${measure.id as string}/$evaluate-measure?${PERIOD}`);
    expect(summary.status).toBe(200);
    expect(counts(summary.body)).toEqual({ 'initial-population': 2 });
    expect(summary.body.extension[0].valueReference).toEqual({ reference: '#evaluation-errors' });
    const errors = (summary.body.contained as Json[]).find((r) => r.id === 'evaluation-errors');
    expect(errors?.issue).toHaveLength(1);
    expect(errors?.issue[0].expression).toEqual([`Patient/${odd.id as string}`]);
    const one = await call(
      `Measure/${measure.id as string}/$evaluate-measure?${PERIOD}&subject=Patient/${odd.id as string}`,
    );
    expect(one.status).toBe(422);
    expect(one.body.issue[0].details.text).toMatch(/FHIRPath .* failed for Patient\//);
  });
});
