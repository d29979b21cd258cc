import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSchema } from '@hearth/definitions';
import { createTestApp, type TestApp } from '../test/app.js';
import { unenumeratedBindings } from './binding-validator.js';

const FHIR = 'application/fhir+json';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const composition = (confidentiality: string) => ({
  resourceType: 'Composition',
  status: 'final',
  type: { text: 'note' },
  date: '2024-01-01',
  author: [{ display: 'Dr. Who' }],
  title: 'A note',
  confidentiality,
});

async function post(resource: object) {
  return t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${(resource as { resourceType: string }).resourceType}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify(resource),
  });
}

describe('required bindings the type schema does not enumerate', () => {
  it('are the few value sets outside valuesets.json', () => {
    const urls = [...unenumeratedBindings(getSchema())].map((u) => u.split('|')[0]);
    expect(urls).toContain('http://terminology.hl7.org/ValueSet/v3-ConfidentialityClassification');
    expect(urls).toContain('http://hl7.org/fhir/ValueSet/mimetypes');
    expect(urls.length).toBeLessThan(10);
  });

  it('are checked on write when the terminology expands them (Composition.confidentiality)', async () => {
    const ok = await post(composition('N'));
    expect(ok.statusCode, ok.body).toBe(201);
    const bad = await post(composition('TOP-SECRET'));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().issue[0]).toMatchObject({
      code: 'code-invalid',
      expression: ['Composition.confidentiality'],
    });
    expect(bad.json().issue[0].details.text).toContain('v3-ConfidentialityClassification');
    // $validate says the same without writing.
    const validate = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Composition/$validate',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify(composition('TOP-SECRET')),
    });
    expect(JSON.stringify(validate.json())).toContain('v3-ConfidentialityClassification');
  });

  it('are left alone when the value set does not expand here (mimetypes)', async () => {
    const binary = await post({
      resourceType: 'DocumentReference',
      status: 'current',
      content: [{ attachment: { contentType: 'made/up', url: 'http://example.org/x' } }],
    });
    expect(binary.statusCode, binary.body).toBe(201);
  });
});
