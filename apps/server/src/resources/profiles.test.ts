import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

const FHIR = 'application/fhir+json';
const BASE = 'http://example.org/fhir/StructureDefinition/';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

function request(method: 'POST' | 'PUT', url: string, body: unknown) {
  return t.app.inject({
    method,
    url,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify(body),
  });
}

const patientProfile = {
  resourceType: 'StructureDefinition',
  url: BASE + 'hearth-patient',
  name: 'HearthPatient',
  status: 'active',
  kind: 'resource',
  abstract: false,
  type: 'Patient',
  derivation: 'constraint',
  baseDefinition: 'http://hl7.org/fhir/StructureDefinition/Patient',
  differential: {
    element: [
      { id: 'Patient', path: 'Patient' },
      { id: 'Patient.identifier', path: 'Patient.identifier', min: 1 },
      {
        id: 'Patient.gender',
        path: 'Patient.gender',
        min: 1,
        binding: { strength: 'required', valueSet: 'http://example.org/fhir/ValueSet/two-genders' },
      },
    ],
  },
};

const twoGenders = {
  resourceType: 'ValueSet',
  url: 'http://example.org/fhir/ValueSet/two-genders',
  status: 'active',
  compose: {
    include: [{ system: 'http://hl7.org/fhir/administrative-gender', concept: [{ code: 'male' }, { code: 'female' }] }],
  },
};

const issuesOf = (res: { json(): unknown }) =>
  (res.json() as { issue: { severity: string; expression?: string[]; details?: { text?: string } }[] }).issue.map(
    (i) => `${i.severity} ${i.expression?.[0]}: ${i.details?.text}`,
  );

describe('stored profiles', () => {
  beforeAll(async () => {
    expect((await request('POST', '/fhir/R4/ValueSet', twoGenders)).statusCode).toBe(201);
    expect((await request('POST', '/fhir/R4/StructureDefinition', patientProfile)).statusCode).toBe(201);
  });

  it('$validate?profile= validates against a StructureDefinition of the project, with its value sets', async () => {
    const url = `/fhir/R4/Patient/$validate?profile=${encodeURIComponent(BASE + 'hearth-patient')}`;
    const ok = await request('POST', url, { resourceType: 'Patient', identifier: [{ value: '1' }], gender: 'male' });
    expect(issuesOf(ok)).toEqual(['information undefined: No issues found']);
    const bad = await request('POST', url, { resourceType: 'Patient', gender: 'other' });
    expect(bad.statusCode).toBe(200);
    expect(issuesOf(bad)).toEqual([
      'error Patient.identifier: Patient.identifier: minimum required = 1, but only found 0',
      'error Patient.gender: The code is not in the required value set http://example.org/fhir/ValueSet/two-genders',
    ]);
    const unknown = await request('POST', '/fhir/R4/Patient/$validate', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'resource', resource: { resourceType: 'Patient' } },
        { name: 'profile', valueCanonical: BASE + 'nope' },
      ],
    });
    expect(issuesOf(unknown)).toEqual([`error Patient: Profile ${BASE}nope is not known to this server`]);
  });

  it('sees a changed StructureDefinition at once', async () => {
    const created = await request('POST', '/fhir/R4/StructureDefinition', {
      ...patientProfile,
      url: BASE + 'changing',
    });
    const id = created.json().id;
    const url = `/fhir/R4/Patient/$validate?profile=${encodeURIComponent(BASE + 'changing')}`;
    const patient = { resourceType: 'Patient', identifier: [{ value: '1' }], gender: 'male' };
    expect(issuesOf(await request('POST', url, patient))).toEqual(['information undefined: No issues found']);
    const stricter = {
      ...patientProfile,
      id,
      url: BASE + 'changing',
      differential: {
        element: [
          { id: 'Patient', path: 'Patient' },
          { id: 'Patient.birthDate', path: 'Patient.birthDate', min: 1 },
        ],
      },
    };
    expect((await request('PUT', `/fhir/R4/StructureDefinition/${id}`, stricter)).statusCode).toBe(200);
    expect(issuesOf(await request('POST', url, patient))).toEqual([
      'error Patient.birthDate: Patient.birthDate: minimum required = 1, but only found 0',
    ]);
  });

  it('declared profiles are enforced on create and update only when the project says so', async () => {
    const declared = {
      resourceType: 'Patient',
      meta: { profile: [BASE + 'hearth-patient'] },
      gender: 'male',
    };
    expect((await request('POST', '/fhir/R4/Patient', declared)).statusCode).toBe(201);
    const repo = t.services.systemRepo(t.testProject.projectId);
    const project = (await repo.readResource('Project', t.testProject.projectId)).resource;
    await repo.updateResource({ ...project, setting: [{ name: 'enforceProfiles', valueBoolean: true }] });

    const refused = await request('POST', '/fhir/R4/Patient', declared);
    expect(refused.statusCode).toBe(422);
    expect(issuesOf(refused)).toEqual([
      'error Patient.identifier: Patient.identifier: minimum required = 1, but only found 0',
    ]);
    const good = { ...declared, identifier: [{ value: 'a' }] };
    const created = await request('POST', '/fhir/R4/Patient', good);
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    expect((await request('PUT', `/fhir/R4/Patient/${id}`, { ...good, id, gender: 'unknown' })).statusCode).toBe(422);
    const unknownProfile = await request('POST', '/fhir/R4/Patient', {
      ...good,
      meta: { profile: [BASE + 'missing'] },
    });
    expect(unknownProfile.statusCode).toBe(422);
    expect(issuesOf(unknownProfile)[0]).toContain(
      'is not known to this server: the project enforces declared profiles',
    );
    // Without a declared profile nothing more is asked.
    expect((await request('POST', '/fhir/R4/Patient', { resourceType: 'Patient' })).statusCode).toBe(201);

    await repo.updateResource({ ...project, setting: [{ name: 'enforceProfiles', valueBoolean: false }] });
    expect((await request('POST', '/fhir/R4/Patient', declared)).statusCode).toBe(201);
  });
  it('a project that enforces profiles also holds vital signs to the profile their code requires, on every write path', async () => {
    // A heart rate without the vital-signs category, with a unit the heartrate profile does not allow.
    const heartRate = {
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
      subject: { reference: 'Patient/p1' },
      effectiveDateTime: '2024-03-01T10:00:00Z',
      valueQuantity: { value: 72, unit: 'Hz', system: 'http://unitsofmeasure.org', code: 'Hz' },
    };
    const conforming = {
      ...heartRate,
      category: [
        { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] },
      ],
      valueQuantity: { value: 72, unit: 'beats/minute', system: 'http://unitsofmeasure.org', code: '/min' },
    };
    const stored = await request('POST', '/fhir/R4/Observation', heartRate);
    expect(stored.statusCode).toBe(201);

    const repo = t.services.systemRepo(t.testProject.projectId);
    const project = (await repo.readResource('Project', t.testProject.projectId)).resource;
    await repo.updateResource({ ...project, setting: [{ name: 'enforceProfiles', valueBoolean: true }] });
    try {
      const refused = await request('POST', '/fhir/R4/Observation', heartRate);
      expect(refused.statusCode).toBe(422);
      expect(
        issuesOf(refused)
          .filter((i) => i.startsWith('error'))
          .map((i) => i.split(':')[0]),
      ).toEqual(['error Observation.category', 'error Observation.category', 'error Observation.valueQuantity.code']);
      // A resource its base definition rejects is still a 400, with every problem named.
      const broken = await request('POST', '/fhir/R4/Observation', { ...heartRate, status: 'bogus' });
      expect(broken.statusCode).toBe(400);
      expect(issuesOf(broken).some((i) => i.startsWith('error Observation.status'))).toBe(true);

      const created = await request('POST', '/fhir/R4/Observation', conforming);
      expect(created.statusCode).toBe(201);
      const id = created.json().id as string;
      const update = await request('PUT', `/fhir/R4/Observation/${id}`, { ...heartRate, id });
      expect(update.statusCode).toBe(422);
      // The stored one that predates the setting can be brought up to the profile.
      const storedId = stored.json().id as string;
      expect(
        (await request('PUT', `/fhir/R4/Observation/${storedId}`, { ...conforming, id: storedId })).statusCode,
      ).toBe(200);

      // The conforming heart rate and the other one, created in one Bundle.
      const bothCreated = (type: 'transaction' | 'batch') => ({
        resourceType: 'Bundle',
        type,
        entry: [conforming, heartRate].map((resource) => ({
          resource,
          request: { method: 'POST', url: 'Observation' },
        })),
      });
      const transaction = await request('POST', '/fhir/R4', bothCreated('transaction'));
      expect(transaction.statusCode).toBe(422);
      const batch = await request('POST', '/fhir/R4', bothCreated('batch'));
      expect(batch.statusCode).toBe(200);
      expect(batch.json().entry.map((e: { response: { status: string } }) => e.response.status.slice(0, 3))).toEqual([
        '201',
        '422',
      ]);

      // $import's path: each line gets its own verdict.
      const prepared = await repo.prepareBulk([
        { ...conforming, id: 'bulk-vital-good' },
        { ...heartRate, id: 'bulk-vital-bad' },
      ] as never);
      expect(prepared.items.map((i) => i.outcome?.id ?? 'ok')).toEqual(['ok', 'unprocessable-entity']);
    } finally {
      await repo.updateResource({ ...project, setting: [{ name: 'enforceProfiles', valueBoolean: false }] });
    }
    expect((await request('POST', '/fhir/R4/Observation', heartRate)).statusCode).toBe(201);
  });
});
