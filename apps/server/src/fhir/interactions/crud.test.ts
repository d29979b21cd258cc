import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';

const FHIR = 'application/fhir+json';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function create(resource: object, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${(resource as { resourceType: string }).resourceType}`,
    headers: { ...t.authHeaders, 'content-type': FHIR, ...headers },
    payload: JSON.stringify(resource),
  });
}

describe('create and read', () => {
  it('creates with a server id, version 1, ETag, Location and Last-Modified', async () => {
    const res = await create({ resourceType: 'Patient', id: 'ignored', name: [{ family: 'Smith' }] });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.id).not.toBe('ignored');
    expect(body.meta.versionId).toBe('1');
    expect(res.headers.etag).toBe('W/"1"');
    expect(res.headers.location).toBe(`http://localhost:8103/fhir/R4/Patient/${body.id}/_history/1`);
    expect(new Date(String(res.headers['last-modified'])).getTime()).toBeGreaterThan(0);
    expect(res.headers['content-type']).toContain('application/fhir+json');

    const read = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${body.id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(body);
    expect(read.headers.etag).toBe('W/"1"');
  });

  it('keeps client meta.profile, tag, security and source; owns versionId and lastUpdated', async () => {
    const meta = {
      versionId: '99',
      lastUpdated: '2000-01-01T00:00:00Z',
      source: 'http://example.org/src',
      profile: ['http://example.org/StructureDefinition/p'],
      tag: [{ system: 'http://example.org/tags', code: 't1' }],
      security: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-Confidentiality', code: 'R' }],
    };
    const body = (await create({ resourceType: 'Patient', meta })).json();
    expect(body.meta.versionId).toBe('1');
    expect(body.meta.lastUpdated).not.toBe(meta.lastUpdated);
    expect(body.meta.source).toBe(meta.source);
    expect(body.meta.profile).toEqual(meta.profile);
    expect(body.meta.tag).toEqual(meta.tag);
    expect(body.meta.security).toEqual(meta.security);
  });

  it('answers 404 for an unknown type and an unknown id, with an OperationOutcome', async () => {
    const unknownType = await t.app.inject({ headers: t.authHeaders, url: '/fhir/R4/Patientx/1' });
    expect(unknownType.statusCode).toBe(404);
    expect(unknownType.json().resourceType).toBe('OperationOutcome');
    const unknownId = await t.app.inject({ headers: t.authHeaders, url: '/fhir/R4/Patient/does-not-exist' });
    expect(unknownId.statusCode).toBe(404);
    expect(unknownId.json().issue[0].code).toBe('not-found');
  });

  it('rejects malformed JSON and a mismatched resourceType with 400', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: '{"resourceType": "Patient",',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().resourceType).toBe('OperationOutcome');
    const mismatch = await create({ resourceType: 'Observation' }).then(() =>
      t.app.inject({
        method: 'POST',
        url: '/fhir/R4/Patient',
        headers: { ...t.authHeaders, 'content-type': FHIR },
        payload: JSON.stringify({ resourceType: 'Observation', status: 'final', code: { text: 'x' } }),
      }),
    );
    expect(mismatch.statusCode).toBe(400);
  });

  it('answers 304 to If-None-Match with the current version', async () => {
    const body = (await create({ resourceType: 'Patient' })).json();
    const res = await t.app.inject({
      url: `/fhir/R4/Patient/${body.id}`,
      headers: { ...t.authHeaders, 'if-none-match': 'W/"1"' },
    });
    expect(res.statusCode).toBe(304);
    const res2 = await t.app.inject({
      url: `/fhir/R4/Patient/${body.id}`,
      headers: { ...t.authHeaders, 'if-none-match': 'W/"2"' },
    });
    expect(res2.statusCode).toBe(200);
  });

  it('honours Prefer: return=minimal and return=OperationOutcome', async () => {
    const minimal = await create({ resourceType: 'Patient' }, { prefer: 'return=minimal' });
    expect(minimal.statusCode).toBe(201);
    expect(minimal.body).toBe('');
    expect(minimal.headers.location).toBeTruthy();
    const oo = await create({ resourceType: 'Patient' }, { prefer: 'return=OperationOutcome' });
    expect(oo.json().resourceType).toBe('OperationOutcome');
  });

  it('rejects a non-JSON _format with 406', async () => {
    const body = (await create({ resourceType: 'Patient' })).json();
    const res = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${body.id}?_format=xml` });
    expect(res.statusCode).toBe(406);
    expect(res.json().resourceType).toBe('OperationOutcome');
  });

  it('pretty-prints with _pretty=true', async () => {
    const body = (await create({ resourceType: 'Patient' })).json();
    const res = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${body.id}?_pretty=true` });
    expect(res.body).toContain('\n  "resourceType"');
  });
});

describe('decimals as written (hl7.org/fhir/R4/datatypes.html#decimal: 1.0 is not 1)', () => {
  const post = (url: string, text: string, method: 'POST' | 'PUT' = 'POST') =>
    t.app.inject({
      method,
      url: `/fhir/R4/${url}`,
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: text,
    });
  const values = (text: string) => [...text.matchAll(/"(?:value|factorOverride)":([-\d.eE+]+)/g)].map((m) => m[1]);

  it('answers a created, updated, read, vread and searched resource with its decimals’ text', async () => {
    const created = await post(
      'Observation',
      '{"resourceType":"Observation","status":"final","code":{"text":"decimals"},"valueQuantity":{"value":1.0},' +
        '"component":[{"code":{"text":"a"},"valueQuantity":{"value":2.50}},{"code":{"text":"b"},"valueQuantity":{"value":70.5}}]}',
    );
    expect(created.statusCode).toBe(201);
    expect(values(created.body)).toEqual(['1.0', '2.50', '70.5']);
    const id = created.json().id as string;
    const read = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Observation/${id}` });
    expect(values(read.body)).toEqual(['1.0', '2.50', '70.5']);
    const updated = await post(
      `Observation/${id}`,
      `{"resourceType":"Observation","id":"${id}","status":"final","code":{"text":"decimals"},"valueQuantity":{"value":1.000}}`,
      'PUT',
    );
    expect(updated.statusCode).toBe(200);
    const search = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Observation?_id=${id}` });
    expect(values(search.body)).toEqual(['1.000']);
    const v1 = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Observation/${id}/_history/1` });
    expect(values(v1.body)).toEqual(['1.0', '2.50', '70.5']);
  });

  it('keeps them at the top level of a resource and inside a transaction', async () => {
    const res = await post(
      '',
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            fullUrl: 'urn:uuid:0f7c2a4e-3f5b-4a6c-9d1e-2b8f6a7c5d40',
            resource: { resourceType: 'Patient' },
            request: { method: 'POST', url: 'Patient' },
          },
          {
            resource: {
              resourceType: 'ChargeItem',
              status: 'billable',
              code: { text: 'x' },
              subject: { reference: 'urn:uuid:0f7c2a4e-3f5b-4a6c-9d1e-2b8f6a7c5d40' },
            },
            request: { method: 'POST', url: 'ChargeItem' },
          },
        ],
      }).replace('"status":"billable"', '"status":"billable","factorOverride":0.80'),
    );
    expect(res.statusCode).toBe(200);
    const location = res.json().entry[1].response.location as string;
    const read = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/${location.replace(/\/_history.*/, '')}`,
    });
    expect(values(read.body)).toEqual(['0.80']);
  });
});

describe('update, vread, delete and history', () => {
  it('updates with a new version, keeps old versions readable, and lists history newest first', async () => {
    const v1 = (await create({ resourceType: 'Patient', active: true })).json();
    const put = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Patient/${v1.id}`,
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({ resourceType: 'Patient', id: v1.id, active: false }),
    });
    expect(put.statusCode).toBe(200);
    expect(put.json().meta.versionId).toBe('2');
    const old = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${v1.id}/_history/1` });
    expect(old.statusCode).toBe(200);
    expect(old.json().active).toBe(true);
    const history = (await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${v1.id}/_history` })).json();
    expect(history.type).toBe('history');
    expect(history.entry.map((e: { resource: { meta: { versionId: string } } }) => e.resource.meta.versionId)).toEqual([
      '2',
      '1',
    ]);
  });

  it('update-as-create with a client-chosen id answers 201', async () => {
    const res = await t.app.inject({
      method: 'PUT',
      url: '/fhir/R4/Patient/client-chosen-1',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({ resourceType: 'Patient', id: 'client-chosen-1' }),
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toBe('client-chosen-1');
  });

  it('rejects an update whose body id differs from the URL', async () => {
    const res = await t.app.inject({
      method: 'PUT',
      url: '/fhir/R4/Patient/abc',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({ resourceType: 'Patient', id: 'xyz' }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().issue[0].expression).toEqual(['Patient.id']);
  });

  it('answers 412 to a stale If-Match', async () => {
    const v1 = (await create({ resourceType: 'Patient' })).json();
    const put = (ifMatch: string) =>
      t.app.inject({
        method: 'PUT',
        url: `/fhir/R4/Patient/${v1.id}`,
        headers: { ...t.authHeaders, 'content-type': FHIR, 'if-match': ifMatch },
        payload: JSON.stringify({ resourceType: 'Patient', id: v1.id, gender: 'female' }),
      });
    expect((await put('W/"1"')).statusCode).toBe(200);
    expect((await put('W/"1"')).statusCode).toBe(412);
  });

  it('deletes: read answers 410, history keeps the deletion, re-create continues the versions', async () => {
    const v1 = (await create({ resourceType: 'Patient' })).json();
    const del = await t.app.inject({ headers: t.authHeaders, method: 'DELETE', url: `/fhir/R4/Patient/${v1.id}` });
    expect(del.statusCode).toBe(204);
    const read = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${v1.id}` });
    expect(read.statusCode).toBe(410);
    expect(read.json().resourceType).toBe('OperationOutcome');
    const history = (await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${v1.id}/_history` })).json();
    expect(history.entry[0].request.method).toBe('DELETE');
    expect(history.entry[0].resource).toBeUndefined();
    const again = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Patient/${v1.id}`,
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({ resourceType: 'Patient', id: v1.id }),
    });
    expect(again.statusCode).toBe(201);
    expect(again.json().meta.versionId).toBe('3');
  });

  it('pages type history with a keyset cursor and filters with _since', async () => {
    const before = new Date().toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await create({ resourceType: 'Device' })).json().id);
    }
    const seen: string[] = [];
    let url: string | undefined = `/fhir/R4/Device/_history?_count=2&_since=${encodeURIComponent(before)}`;
    while (url) {
      const page: { entry: { resource: { id: string } }[]; link: { relation: string; url: string }[] } = (
        await t.app.inject({ headers: t.authHeaders, url })
      ).json();
      seen.push(...page.entry.map((e: { resource: { id: string } }) => e.resource.id));
      const next: { url: string } | undefined = page.link.find((l) => l.relation === 'next');
      url = next ? next.url.replace('http://localhost:8103', '') : undefined;
    }
    expect(seen.sort()).toEqual([...ids].sort());
  });
});
