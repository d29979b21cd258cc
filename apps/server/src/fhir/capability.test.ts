import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAllResourceTypes } from '@hearth/definitions';
import { createTestApp, type TestApp } from '../test/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

interface CapabilityResource {
  type: string;
  interaction: { code: string }[];
  searchParam?: { name: string; type: string }[];
  operation?: { name: string; definition: string }[];
  conditionalDelete?: string;
}

describe('GET /metadata', () => {
  it('is public and lists every stored type with the interactions the server supports', async () => {
    const res = await t.app.inject({ url: '/fhir/R4/metadata' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/fhir+json');
    const cs = res.json();
    expect(cs.resourceType).toBe('CapabilityStatement');
    expect(cs.fhirVersion).toBe('4.0.1');
    expect(cs.kind).toBe('instance');
    expect(cs.format).toContain('application/fhir+json');
    expect(cs.patchFormat).toEqual(['application/json-patch+json', 'application/fhir+json']);
    const rest = cs.rest[0];
    expect(rest.mode).toBe('server');
    expect(rest.interaction.map((i: { code: string }) => i.code).sort()).toEqual([
      'batch',
      'history-system',
      'search-system',
      'transaction',
    ]);
    const types = (rest.resource as CapabilityResource[]).map((r) => r.type);
    expect(types).toEqual(getAllResourceTypes());
    const patient = (rest.resource as CapabilityResource[]).find((r) => r.type === 'Patient')!;
    expect(patient.interaction.map((i) => i.code)).toEqual([
      'read',
      'vread',
      'update',
      'patch',
      'delete',
      'history-instance',
      'history-type',
      'create',
      'search-type',
    ]);
    expect(patient.conditionalDelete).toBe('multiple');
    expect(rest.resource.find((r: CapabilityResource) => r.type === 'Project')).toBeTruthy();
  });

  it('lists the registered operations and the search parameters of the search module', async () => {
    const cs = (await t.app.inject({ url: '/fhir/R4/metadata' })).json();
    const rest = cs.rest[0];
    const registered = t.services.operations.all();
    const listed = new Set<string>([
      ...rest.operation.map((o: { name: string }) => o.name),
      ...(rest.resource as CapabilityResource[]).flatMap((r) => (r.operation ?? []).map((o) => o.name)),
    ]);
    expect([...listed].sort()).toEqual([...new Set(registered.map((o) => o.name))].sort());
    expect(rest.operation).toContainEqual({
      name: 'validate',
      definition: 'http://hl7.org/fhir/OperationDefinition/Resource-validate',
    });
    const patient = (rest.resource as CapabilityResource[]).find((r) => r.type === 'Patient')!;
    const expected = (await t.services.search.searchParamsFor('Patient')).map((p) => p.name).sort();
    expect(expected).toContain('identifier');
    expect((patient.searchParam ?? []).map((p) => p.name).sort()).toEqual(expected);
  });

  it('names the definition of each operation, which GET OperationDefinition/{id} answers', async () => {
    const cs = (await t.app.inject({ url: '/fhir/R4/metadata' })).json();
    const patient = (cs.rest[0].resource as CapabilityResource[]).find((r) => r.type === 'Patient')!;
    expect(patient.operation).toContainEqual({
      name: 'export',
      definition: 'http://hl7.org/fhir/uv/bulkdata/OperationDefinition/patient-export',
    });
    for (const entry of t.services.operations.all()) {
      const res = await t.app.inject({
        url: `/fhir/R4/OperationDefinition/${entry.definition.id}`,
        headers: t.authHeaders,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ resourceType: 'OperationDefinition', url: entry.definition.url });
    }
    const summary = await t.app.inject({
      url: '/fhir/R4/OperationDefinition/Bot-execute?_elements=code',
      headers: t.authHeaders,
    });
    expect(summary.json().code).toBe('execute');
    expect(summary.json().parameter).toBeUndefined();
  });

  it('answers 406 to a non-JSON _format', async () => {
    const res = await t.app.inject({ url: '/fhir/R4/metadata?_format=xml' });
    expect(res.statusCode).toBe(406);
  });
});
