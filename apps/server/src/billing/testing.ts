// Fixtures of the billing tests: a fee schedule, a patient with coverage, an encounter with its
// procedures and diagnoses, all created over HTTP as a client would.
import type { TestApp } from '../test/app.js';
import { CPT, ICD10CM, NPI, SNOMED } from './common.js';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const FHIR = 'application/fhir+json';

export async function post(t: TestApp, resource: Json): Promise<Json> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType as string}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

export async function put(t: TestApp, resource: Json): Promise<Json> {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/fhir/R4/${resource.resourceType as string}/${resource.id as string}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

export async function read(t: TestApp, ref: string): Promise<Json> {
  const res = await t.app.inject({ url: `/fhir/R4/${ref}`, headers: t.authHeaders });
  return res.json();
}

/** Calls an operation: POST with a Parameters body (or none), GET without. */
export async function operation(
  t: TestApp,
  url: string,
  parameter?: Json[],
  method: 'GET' | 'POST' = 'POST',
  headers: Record<string, string> = t.authHeaders,
): Promise<{ status: number; body: Json; raw: Buffer; type: string }> {
  const res = await t.app.inject({
    method,
    url: `/fhir/R4/${url}`,
    headers: parameter ? { ...headers, 'content-type': FHIR } : headers,
    payload: parameter ? { resourceType: 'Parameters', parameter } : undefined,
  });
  const type = String(res.headers['content-type'] ?? '');
  return { status: res.statusCode, body: type.includes('json') ? res.json() : {}, raw: res.rawPayload, type };
}

export const cpt = (code: string, display: string) => ({ coding: [{ system: CPT, code, display }], text: display });

/** A fee schedule entry: one code, a base price, optionally more components. */
export function feeFor(code: string, base: number, extra: Json = {}): Json {
  return {
    resourceType: 'ChargeItemDefinition',
    url: `http://example.org/fee-schedule/${code}`,
    status: 'active',
    date: '2025-01-01',
    code: { coding: [{ system: CPT, code }] },
    propertyGroup: [{ priceComponent: [{ type: 'base', amount: { value: base, currency: 'USD' } }] }],
    ...extra,
  };
}

export interface BillingFixture {
  patient: Json;
  payer: Json;
  clinic: Json;
  doctor: Json;
  coverage: Json;
  encounter: Json;
  procedures: Json[];
  diagnoses: Json[];
}

/**
 * Jane Doe, insured by Acme Health (member W123456789) for 2025, seen on 2025-03-14 at Hearth
 * Family Clinic: a level-3 office visit (99213), two venipunctures (36415) and an ECG (93000),
 * with a hypertension (I10) and a type 2 diabetes (E11.9) diagnosis.
 */
export async function billingFixture(t: TestApp, family = 'Doe'): Promise<BillingFixture> {
  const patient = await post(t, {
    resourceType: 'Patient',
    identifier: [{ type: { coding: [{ code: 'MR' }] }, system: 'http://example.org/mrn', value: `MRN-${family}` }],
    name: [{ family, given: ['Jane'] }],
    gender: 'female',
    birthDate: '1980-05-02',
    address: [{ line: ['1 Main St'], city: 'Springfield', state: 'IL', postalCode: '62701' }],
  });
  const payer = await post(t, { resourceType: 'Organization', name: 'Acme Health', address: [{ city: 'Chicago' }] });
  const clinic = await post(t, {
    resourceType: 'Organization',
    name: 'Hearth Family Clinic',
    identifier: [{ system: NPI, value: '1234567893' }],
  });
  const doctor = await post(t, {
    resourceType: 'Practitioner',
    name: [{ family: 'Smith', given: ['Alex'] }],
    identifier: [{ system: NPI, value: '1999999992' }],
  });
  const coverage = await post(t, {
    resourceType: 'Coverage',
    status: 'active',
    beneficiary: { reference: `Patient/${patient.id}` },
    payor: [{ reference: `Organization/${payer.id}` }],
    subscriberId: 'W123456789',
    relationship: {
      coding: [{ system: 'http://terminology.hl7.org/CodeSystem/subscriber-relationship', code: 'self' }],
    },
    period: { start: '2025-01-01', end: '2025-12-31' },
    class: [
      {
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/coverage-class', code: 'group' }] },
        value: 'GRP-42',
        name: 'Acme Gold',
      },
    ],
  });
  const encounter = await post(t, {
    resourceType: 'Encounter',
    status: 'finished',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
    type: [cpt('99213', 'Office visit, established patient, level 3')],
    subject: { reference: `Patient/${patient.id}` },
    participant: [{ individual: { reference: `Practitioner/${doctor.id}` } }],
    serviceProvider: { reference: `Organization/${clinic.id}` },
    period: { start: '2025-03-14T09:00:00Z', end: '2025-03-14T09:30:00Z' },
  });
  const procedure = (code: string, display: string, snomed: string, status = 'completed') =>
    post(t, {
      resourceType: 'Procedure',
      status,
      code: { coding: [{ system: SNOMED, code: snomed }, ...cpt(code, display).coding], text: display },
      subject: { reference: `Patient/${patient.id}` },
      encounter: { reference: `Encounter/${encounter.id}` },
      performedDateTime: '2025-03-14T09:10:00Z',
    });
  const procedures = [
    await procedure('36415', 'Venipuncture', '82078001'),
    await procedure('36415', 'Venipuncture', '82078001'),
    await procedure('93000', 'Electrocardiogram', '29303009'),
    await procedure('93000', 'Electrocardiogram', '29303009', 'not-done'),
  ];
  const diagnosis = (code: string, display: string) =>
    post(t, {
      resourceType: 'Condition',
      category: [
        {
          coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-category', code: 'encounter-diagnosis' }],
        },
      ],
      code: { coding: [{ system: ICD10CM, code, display }] },
      subject: { reference: `Patient/${patient.id}` },
      encounter: { reference: `Encounter/${encounter.id}` },
      recordedDate: '2025-03-14',
    });
  const diagnoses = [await diagnosis('I10', 'Essential hypertension'), await diagnosis('E11.9', 'Type 2 diabetes')];
  return { patient, payer, clinic, doctor, coverage, encounter, procedures, diagnoses };
}

/** The fee schedule of the fixture: 99213 at 120.00, 36415 at 15.00, 93000 at 45.50. */
export async function feeSchedule(t: TestApp): Promise<void> {
  await post(t, feeFor('99213', 120));
  await post(t, feeFor('36415', 15));
  await post(t, feeFor('93000', 45.5));
}

export const param = (json: Json, name: string) =>
  (json.parameter as Json[] | undefined)?.filter((p) => p.name === name) ?? [];
