// Published eCQMs (../shared/data/ecqm-r4: CMS122 and CMS104 from cqframework/ecqm-content-r4-2021)
// loaded into a real server with their Libraries (ELM JSON) and ValueSets, every test patient
// loaded, each evaluated with $evaluate-measure: every population count of every group must equal
// the expected MeasureReport's. Then the same patients together: summary, subject-list, a
// stratifier, supplemental data and a stored report. Skipped when the data is absent.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { repairedEcqmBundle } from '../test/ecqm-data.js';

const DIR = resolve(import.meta.dirname, '../../../../../shared/data/ecqm-r4');
const present = existsSync(DIR);
const FHIR = 'application/fhir+json';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Case {
  case: string;
  patient: string;
  bundle: string;
  expected: string;
}
interface Manifest {
  measureId: string;
  periodStart: string;
  periodEnd: string;
  cases: Case[];
}

const MEASURES = present ? readdirSync(DIR).filter((d) => existsSync(`${DIR}/${d}/manifest.json`)) : ([] as string[]);

/**
 * Cases that cannot pass, with the reason (none so far). Every case not listed here must match its
 * expected report exactly, population by population.
 */
const KNOWN_FAILURES: Record<string, string> = {};

let t: TestApp;

function readJson(path: string): Json {
  return JSON.parse(readFileSync(path, 'utf8')) as Json;
}

async function transaction(bundle: Json): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/fhir/R4',
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: bundle,
  });
  if (res.statusCode !== 200) throw new Error(`transaction: ${res.statusCode} ${res.body.slice(0, 2000)}`);
}

async function evaluate(
  path: string,
  method: 'GET' | 'POST' = 'GET',
  payload?: Json,
): Promise<{ status: number; body: Json }> {
  const res = await t.app.inject({
    method,
    url: `/fhir/R4/${path}`,
    headers: { ...t.authHeaders, ...(payload ? { 'content-type': FHIR } : {}) },
    payload,
  });
  return { status: res.statusCode, body: res.json() };
}

function counts(report: Json): Record<string, number>[] {
  return (report.group as Json[]).map((g) =>
    Object.fromEntries((g.population as Json[]).map((p) => [p.code.coding[0].code as string, p.count as number])),
  );
}

beforeAll(async () => {
  if (!present) return;
  t = await createTestApp();
  for (const measure of MEASURES) {
    await transaction(readJson(`${DIR}/${measure}/measure-bundle.json`));
    const manifest = readJson(`${DIR}/${measure}/manifest.json`) as Manifest;
    for (const c of manifest.cases) await transaction(repairedEcqmBundle(readJson(`${DIR}/${measure}/${c.bundle}`)));
  }
}, 600_000);

afterAll(async () => {
  await t?.close();
});

describe.skipIf(!present)('published eCQMs with their test patients', () => {
  it('finds the measures of the data set', () => {
    expect(MEASURES.sort()).toEqual([
      'DiabetesHemoglobinA1cHbA1cPoorControl9FHIR',
      'DischargedonAntithromboticTherapyFHIR',
    ]);
  });

  for (const measure of MEASURES) {
    const manifest = readJson(`${DIR}/${measure}/manifest.json`) as Manifest;
    const period = `periodStart=${manifest.periodStart}&periodEnd=${manifest.periodEnd}`;

    for (const c of manifest.cases) {
      it.skipIf(c.case in KNOWN_FAILURES)(
        `${measure} ${c.case}: every population count as expected`,
        async () => {
          const expected = readJson(`${DIR}/${measure}/${c.expected}`);
          const { status, body } = await evaluate(
            `Measure/${measure}/$evaluate-measure?${period}&subject=${c.patient}`,
          );
          expect(status, JSON.stringify(body).slice(0, 1000)).toBe(200);
          expect(body.resourceType).toBe('MeasureReport');
          expect(body.type).toBe('individual');
          expect(body.subject).toEqual({ reference: c.patient });
          expect(counts(body)).toEqual(counts(expected));
          // The individual report carries the patient's supplemental data (CMS122 declares four).
          const declared = (readJson(`${DIR}/${measure}/measure-bundle.json`).entry as Json[]).find(
            (e) => e.resource.resourceType === 'Measure',
          )?.resource.supplementalData as Json[] | undefined;
          if (declared?.length) {
            const sex = (body.contained as Json[]).find(
              (r) => r.resourceType === 'Observation' && r.code.text === declared[declared.length - 1].id,
            );
            expect(sex?.valueCodeableConcept?.coding?.[0]?.code).toMatch(/^[MF]$/);
          }
        },
        120_000,
      );
    }

    it(`${measure}: summary over every patient equals the sum of the individual reports; subject-list names them`, async () => {
      const expectedSum: Record<string, number> = {};
      for (const c of manifest.cases) {
        for (const [code, n] of Object.entries(counts(readJson(`${DIR}/${measure}/${c.expected}`))[0])) {
          expectedSum[code] = (expectedSum[code] ?? 0) + n;
        }
      }
      const summary = await evaluate(`Measure/${measure}/$evaluate-measure?${period}&reportType=population`);
      expect(summary.status, JSON.stringify(summary.body).slice(0, 1000)).toBe(200);
      expect(summary.body.type).toBe('summary');
      // The other measure's patients are in the server too: they are not in this measure's populations.
      expect(counts(summary.body)[0]).toEqual(expectedSum);
      const score = summary.body.group[0].measureScore?.value;
      expect(score).toBeCloseTo(expectedSum.numerator / expectedSum.denominator, 5);

      const list = await evaluate(`Measure/${measure}/$evaluate-measure?${period}&reportType=subject-list`);
      expect(list.status).toBe(200);
      const ipList = (list.body.contained as Json[]).find(
        (r) => `#${r.id as string}` === list.body.group[0].population[0].subjectResults.reference,
      );
      const inIp = manifest.cases
        .filter((c) => counts(readJson(`${DIR}/${measure}/${c.expected}`))[0]['initial-population'] > 0)
        .map((c) => c.patient)
        .sort();
      expect((ipList?.entry as Json[]).map((e) => e.item.reference)).toEqual(inIp);
    }, 300_000);
  }

  it('type-level call by canonical url, a Group subject, a stratifier, and persist=true (POST Parameters)', async () => {
    const measure = 'DiabetesHemoglobinA1cHbA1cPoorControl9FHIR';
    const manifest = readJson(`${DIR}/${measure}/manifest.json`) as Manifest;
    const original = (await evaluate(`Measure/${measure}`)).body;
    // A copy of the Measure stratified by the library's "SDE Sex" (a CQL Code per patient).
    const { id: _id, meta: _meta, ...rest } = original;
    const stratified = {
      ...rest,
      url: 'http://example.org/Measure/cms122-by-sex',
      version: '1',
      group: [
        {
          ...original.group[0],
          stratifier: [{ id: 'by-sex', criteria: { language: 'text/cql.identifier', expression: 'SDE Sex' } }],
        },
      ],
    };
    const created = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Measure',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: stratified,
    });
    expect(created.statusCode).toBe(201);
    const group = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Group',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: {
        resourceType: 'Group',
        type: 'person',
        actual: true,
        member: manifest.cases.map((c) => ({ entity: { reference: c.patient } })),
      },
    });
    const groupId = group.json().id as string;
    const res = await evaluate('Measure/$evaluate-measure', 'POST', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'measure', valueString: 'http://example.org/Measure/cms122-by-sex|1' },
        { name: 'periodStart', valueDate: manifest.periodStart },
        { name: 'periodEnd', valueDate: manifest.periodEnd },
        { name: 'subject', valueString: `Group/${groupId}` },
        { name: 'persist', valueBoolean: true },
      ],
    });
    expect(res.status, JSON.stringify(res.body).slice(0, 1000)).toBe(201);
    expect(res.body.id).toBeTruthy();
    expect(res.body.subject).toEqual({ reference: `Group/${groupId}` });
    expect(res.body.measure).toBe('http://example.org/Measure/cms122-by-sex|1');
    const strata = res.body.group[0].stratifier[0].stratum as Json[];
    // Each stratum's counts add up to the group's.
    const total: Record<string, number> = {};
    for (const s of strata) {
      for (const p of s.population as Json[])
        total[p.code.coding[0].code] = (total[p.code.coding[0].code] ?? 0) + p.count;
    }
    expect(total).toEqual(counts(res.body)[0]);
    expect(strata.map((s) => s.value.coding?.[0]?.code ?? s.value.text).sort()).toEqual(
      [...new Set(strata.map((s) => s.value.coding?.[0]?.code ?? s.value.text))].sort(),
    );
    // Summary supplemental data: each value of SDE Sex with how many in the initial population had it.
    const sexes = (res.body.contained as Json[]).filter(
      (r) =>
        r.resourceType === 'Observation' &&
        r.extension[0].extension.some((e: Json) => e.valueString === original.supplementalData.at(-1).id),
    );
    expect(sexes.reduce((n, o) => n + (o.valueInteger as number), 0)).toBe(counts(res.body)[0]['initial-population']);
    // Stored: readable as a MeasureReport.
    const stored = await evaluate(`MeasureReport/${res.body.id as string}`);
    expect(stored.status).toBe(200);
    expect(stored.body.group[0].population).toEqual(res.body.group[0].population);
  }, 300_000);
});
