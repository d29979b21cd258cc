import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

const FHIR = 'application/fhir+json';
/** A narrative: without one a resource gets dom-6's warning ("should have narrative"). */
const text = { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">A patient</div>' };
let t: TestApp;
let auth: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  auth = (t as { authHeaders?: Record<string, string> }).authHeaders ?? {};
});
afterAll(async () => {
  await t?.close();
});

function post(url: string, body: unknown) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { ...auth, 'content-type': FHIR },
    payload: JSON.stringify(body),
  });
}

describe('$validate', () => {
  it('answers 200 with an informational outcome for a valid resource', async () => {
    const res = await post('/fhir/R4/Patient/$validate', { resourceType: 'Patient', text, gender: 'male' });
    expect(res.statusCode).toBe(200);
    const outcome = res.json();
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue).toHaveLength(1);
    expect(outcome.issue[0].severity).toBe('information');
  });

  it('answers 200 with one issue per problem, each with its FHIRPath location', async () => {
    const res = await post('/fhir/R4/Patient/$validate', {
      resourceType: 'Patient',
      gender: 'nonsense',
      birthDate: '1970-13-45',
      name: [{ given: 'not-a-list' }],
      colour: 'blue',
    });
    expect(res.statusCode).toBe(200);
    const issues = res.json().issue as { severity: string; expression?: string[] }[];
    const paths = issues.flatMap((i) => i.expression ?? []);
    expect(paths).toEqual(expect.arrayContaining(['Patient.gender', 'Patient.birthDate', 'Patient.colour']));
    expect(paths.some((p) => p.startsWith('Patient.name[0].given'))).toBe(true);
    expect(issues.filter((i) => i.expression?.[0] !== 'Patient').every((i) => i.severity === 'error')).toBe(true);
  });

  it('takes Parameters with resource and mode, and checks the type against the URL', async () => {
    const res = await post('/fhir/R4/Observation/$validate', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'resource', resource: { resourceType: 'Patient' } },
        { name: 'mode', valueCode: 'create' },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().issue[0].expression).toEqual(['resourceType']);
    const badMode = await post('/fhir/R4/Patient/$validate', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'resource', resource: { resourceType: 'Patient' } },
        { name: 'mode', valueCode: 'frobnicate' },
      ],
    });
    expect(badMode.statusCode).toBe(400);
  });

  it('validates a stored resource at instance level, and a body against the URL id', async () => {
    const created = await post('/fhir/R4/Patient', { resourceType: 'Patient', text, active: true });
    const id = created.json().id;
    const stored = await t.app.inject({ url: `/fhir/R4/Patient/${id}/$validate`, headers: auth });
    expect(stored.statusCode).toBe(200);
    expect(stored.json().issue[0].severity).toBe('information');
    const mismatch = await post(`/fhir/R4/Patient/${id}/$validate`, { resourceType: 'Patient', id: 'other' });
    expect(mismatch.statusCode).toBe(200);
    expect(mismatch.json().issue.some((i: { expression?: string[] }) => i.expression?.[0] === 'Patient.id')).toBe(true);
    const missing = await t.app.inject({ url: '/fhir/R4/Patient/no-such-patient/$validate', headers: auth });
    expect(missing.statusCode).toBe(404);
  });

  it('checks a vital sign against the profile its code requires, which a write does not demand', async () => {
    // A heart rate without the vital-signs category, with a unit the heartrate profile does not fix.
    const heartRate = {
      resourceType: 'Observation',
      text,
      status: 'final',
      code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
      subject: { reference: 'Patient/p1' },
      effectiveDateTime: '2024-03-01T10:00:00Z',
      valueQuantity: { value: 72, unit: 'Hz', system: 'http://unitsofmeasure.org', code: 'Hz' },
    };
    const res = await post('/fhir/R4/Observation/$validate', heartRate);
    expect(res.statusCode).toBe(200);
    const errors = (res.json().issue as { severity: string; expression?: string[] }[])
      .filter((i) => i.severity === 'error')
      .map((i) => i.expression?.[0]);
    // The category: none at all, and so no vital-signs one (the profile's VSCat slice).
    expect(errors).toEqual(['Observation.category', 'Observation.category', 'Observation.valueQuantity.code']);
    const created = await post('/fhir/R4/Observation', heartRate);
    expect(created.statusCode).toBe(201);
  });

  it('answers 400 without a resource to validate, and 404 for an unknown type', async () => {
    const empty = await t.app.inject({ method: 'POST', url: '/fhir/R4/Patient/$validate', headers: auth });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().resourceType).toBe('OperationOutcome');
    const unknown = await post('/fhir/R4/Nonsense/$validate', { resourceType: 'Nonsense' });
    expect(unknown.statusCode).toBe(404);
  });
});
