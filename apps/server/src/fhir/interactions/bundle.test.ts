import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';

const FHIR = 'application/fhir+json';
const BASE = 'http://localhost:8103/fhir/R4/';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ config: { maxBundleEntries: 500 } });
});
afterAll(async () => {
  await t?.close();
});

interface ResponseEntry {
  fullUrl?: string;
  resource?: Record<string, unknown> & { id: string; resourceType: string };
  response: {
    status: string;
    location?: string;
    etag?: string;
    lastModified?: string;
    outcome?: { resourceType: string; issue: { expression?: string[] }[] };
  };
}

async function post(bundle: object, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/fhir/R4',
    headers: { ...t.authHeaders, 'content-type': FHIR, ...headers },
    payload: JSON.stringify(bundle),
  });
}

async function create(resource: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType as string}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify(resource),
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** One patient and `n` linked resources by urn:uuid, as a client importing a record sends it. */
export function patientRecordBundle(n: number): { resourceType: string; type: string; entry: object[] } {
  const patientUrl = 'urn:uuid:6f4c1c5e-0000-4000-8000-000000000001';
  const entry: object[] = [
    {
      fullUrl: patientUrl,
      resource: { resourceType: 'Patient', name: [{ family: 'Import', given: ['Bulk'] }], gender: 'female' },
      request: { method: 'POST', url: 'Patient' },
    },
  ];
  const encounterUrl = 'urn:uuid:6f4c1c5e-0000-4000-8000-000000000002';
  entry.push({
    fullUrl: encounterUrl,
    resource: {
      resourceType: 'Encounter',
      status: 'finished',
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
      subject: { reference: patientUrl },
    },
    request: { method: 'POST', url: 'Encounter' },
  });
  for (let i = 2; i < n; i++) {
    const fullUrl = `urn:uuid:6f4c1c5e-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
    const resource =
      i % 3 === 0
        ? {
            resourceType: 'Condition',
            subject: { reference: patientUrl },
            encounter: { reference: encounterUrl },
            code: { text: `condition ${i}` },
          }
        : {
            resourceType: 'Observation',
            status: 'final',
            code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }], text: 'Heart rate' },
            subject: { reference: patientUrl },
            encounter: { reference: encounterUrl },
            valueQuantity: { value: 60 + i, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' },
          };
    entry.push({ fullUrl, resource, request: { method: 'POST', url: resource.resourceType } });
  }
  return { resourceType: 'Bundle', type: 'transaction', entry };
}

describe('transaction', () => {
  it('creates linked resources, rewriting urn:uuid references and fullUrls', async () => {
    const res = await post(patientRecordBundle(10));
    expect(res.statusCode).toBe(200);
    const bundle = res.json();
    expect(bundle.type).toBe('transaction-response');
    const entries = bundle.entry as ResponseEntry[];
    expect(entries).toHaveLength(10);
    const patient = entries[0];
    expect(patient.response.status).toBe('201 Created');
    expect(patient.response.etag).toBe('W/"1"');
    expect(patient.response.location).toBe(`Patient/${patient.resource!.id}/_history/1`);
    expect(patient.fullUrl).toBe(`${BASE}Patient/${patient.resource!.id}`);
    expect(new Date(patient.response.lastModified!).getTime()).toBeGreaterThan(0);
    const encounterRef = `Encounter/${entries[1].resource!.id}`;
    for (const e of entries.slice(2)) {
      expect(e.resource!.subject).toEqual({ reference: `Patient/${patient.resource!.id}` });
      expect(e.resource!.encounter).toEqual({ reference: encounterRef });
    }
    // Stored as answered.
    const obs = entries[2];
    const read = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/${obs.resource!.resourceType}/${obs.resource!.id}`,
    });
    expect(read.json().subject.reference).toBe(`Patient/${patient.resource!.id}`);
  });

  it('processes DELETE, POST, PUT, GET in that order whatever the entry order', async () => {
    const existing = await create({ resourceType: 'Patient', active: true });
    const doomed = await create({ resourceType: 'Patient' });
    const res = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        { request: { method: 'GET', url: `Patient/${existing.id}` } },
        {
          resource: { resourceType: 'Patient', id: existing.id, active: false },
          request: { method: 'PUT', url: `Patient/${existing.id}` },
        },
        { request: { method: 'DELETE', url: `Patient/${doomed.id}` } },
      ],
    });
    expect(res.statusCode).toBe(200);
    const [get, put, del] = res.json().entry as ResponseEntry[];
    expect(put.response.status).toBe('200 OK');
    expect(get.resource!.active).toBe(false);
    expect((get.resource!.meta as { versionId: string }).versionId).toBe('2');
    expect(del.response.status).toBe('204 No Content');
    expect((await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Patient/${doomed.id}` })).statusCode).toBe(410);
  });

  it('writes nothing when a later entry fails, and names that entry', async () => {
    const before = new Date().toISOString();
    const target = await create({ resourceType: 'Patient' });
    const res = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        { resource: { resourceType: 'Patient', gender: 'male' }, request: { method: 'POST', url: 'Patient' } },
        {
          resource: { resourceType: 'Patient', id: target.id, gender: 'female' },
          request: { method: 'PUT', url: `Patient/${target.id}`, ifMatch: 'W/"7"' },
        },
      ],
    });
    expect(res.statusCode).toBe(412);
    const outcome = res.json();
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue[0].details.text).toContain('Bundle.entry[1]');
    const history = (
      await t.app.inject({
        headers: t.authHeaders,
        url: `/fhir/R4/Patient/_history?_since=${encodeURIComponent(before)}`,
      })
    ).json();
    expect(history.entry).toHaveLength(1); // only the Patient created by this test
  });

  it('resolves conditional creates against the database and against earlier entries of the Bundle', async () => {
    const system = 'http://example.org/bundle-cond';
    const existing = await create({ resourceType: 'Practitioner', identifier: [{ system, value: 'known' }] });
    const entry = (fullUrl: string, value: string) => ({
      fullUrl,
      resource: { resourceType: 'Practitioner', identifier: [{ system, value }] },
      request: { method: 'POST', url: 'Practitioner', ifNoneExist: `identifier=${system}|${value}` },
    });
    const res = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        entry('urn:uuid:p-known', 'known'),
        entry('urn:uuid:p-new-1', 'new'),
        entry('urn:uuid:p-new-2', 'new'),
        {
          resource: {
            resourceType: 'Encounter',
            status: 'finished',
            class: { code: 'AMB' },
            participant: [
              { individual: { reference: 'urn:uuid:p-known' } },
              { individual: { reference: 'urn:uuid:p-new-2' } },
              { individual: { reference: `Practitioner?identifier=${system}|new` } },
            ],
          },
          request: { method: 'POST', url: 'Encounter' },
        },
      ],
    });
    expect(res.statusCode).toBe(200);
    const [known, new1, new2, encounter] = res.json().entry as ResponseEntry[];
    expect(known.response.status).toBe('200 OK');
    expect(known.resource!.id).toBe(existing.id);
    expect(new1.response.status).toBe('201 Created');
    expect(new2.response.status).toBe('200 OK');
    expect(new2.resource!.id).toBe(new1.resource!.id);
    const refs = (encounter.resource!.participant as { individual: { reference: string } }[]).map(
      (p) => p.individual.reference,
    );
    expect(refs).toEqual([
      `Practitioner/${existing.id}`,
      `Practitioner/${new1.resource!.id}`,
      `Practitioner/${new1.resource!.id}`,
    ]);
  });

  it('lets a GET entry search for resources of the same Bundle by their placeholder', async () => {
    const bundle = patientRecordBundle(5);
    const patientUrl = (bundle.entry[0] as { fullUrl: string }).fullUrl;
    bundle.entry.unshift({ request: { method: 'GET', url: `Observation?subject=${patientUrl}` } });
    const res = await post(bundle);
    expect(res.statusCode).toBe(200);
    const [search, patient] = res.json().entry as { resource: { entry?: { resource: { subject: unknown } }[] } }[];
    const patientId = (patient.resource as unknown as { id: string }).id;
    expect(search.resource.entry?.length).toBeGreaterThan(0);
    for (const e of search.resource.entry ?? []) {
      expect(e.resource.subject).toEqual({ reference: `Patient/${patientId}` });
    }
  });

  it('rejects a urn:uuid reference that no entry defines', async () => {
    const res = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          resource: {
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'x' },
            subject: { reference: 'urn:uuid:00000000-0000-4000-8000-00000000dead' },
          },
          request: { method: 'POST', url: 'Observation' },
        },
      ],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().issue[0].details.text).toContain('urn:uuid:00000000-0000-4000-8000-00000000dead');
  });

  it('rejects two entries with the same fullUrl and unknown methods', async () => {
    const dup = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        { fullUrl: 'urn:uuid:a', resource: { resourceType: 'Patient' }, request: { method: 'POST', url: 'Patient' } },
        { fullUrl: 'urn:uuid:a', resource: { resourceType: 'Patient' }, request: { method: 'POST', url: 'Patient' } },
      ],
    });
    expect(dup.statusCode).toBe(400);
    const bad = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [{ resource: { resourceType: 'Patient' }, request: { method: 'FETCH', url: 'Patient' } }],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().issue[0].expression).toEqual(['Bundle.entry[0].request.method']);
  });

  it('applies PATCH entries (JSON Patch in a Binary, FHIRPath Patch in Parameters) and honours ifMatch', async () => {
    const p = await create({ resourceType: 'Patient', active: true, gender: 'male' });
    const jsonPatch = Buffer.from(JSON.stringify([{ op: 'replace', path: '/active', value: false }])).toString(
      'base64',
    );
    const res = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          resource: { resourceType: 'Binary', contentType: 'application/json-patch+json', data: jsonPatch },
          request: { method: 'PATCH', url: `Patient/${p.id}`, ifMatch: 'W/"1"' },
        },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().entry[0].resource.active).toBe(false);
    const fhirPathPatch = {
      resourceType: 'Parameters',
      parameter: [
        {
          name: 'operation',
          part: [
            { name: 'type', valueCode: 'replace' },
            { name: 'path', valueString: 'Patient.gender' },
            { name: 'value', valueCode: 'female' },
          ],
        },
      ],
    };
    const stale = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [{ resource: fhirPathPatch, request: { method: 'PATCH', url: `Patient/${p.id}`, ifMatch: 'W/"1"' } }],
    });
    expect(stale.statusCode).toBe(412);
    const ok = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [{ resource: fhirPathPatch, request: { method: 'PATCH', url: `Patient/${p.id}`, ifMatch: 'W/"2"' } }],
    });
    expect(ok.json().entry[0].resource.gender).toBe('female');
  });

  it('stores Binary entries outside the JSON tables', async () => {
    const bytes = Buffer.from('hello from a transaction');
    const res = await post({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          fullUrl: 'urn:uuid:bin-1',
          resource: { resourceType: 'Binary', contentType: 'text/plain', data: bytes.toString('base64') },
          request: { method: 'POST', url: 'Binary' },
        },
        {
          resource: {
            resourceType: 'DocumentReference',
            status: 'current',
            content: [{ attachment: { contentType: 'text/plain', url: 'urn:uuid:bin-1' } }],
          },
          request: { method: 'POST', url: 'DocumentReference' },
        },
      ],
    });
    expect(res.statusCode).toBe(200);
    const binary = res.json().entry[0].resource;
    expect(binary.data).toBeUndefined();
    // The reference resolved to the Binary, stored as Binary/{id} and answered as its signed URL.
    expect(res.json().entry[1].resource.content[0].attachment.url).toMatch(
      new RegExp(`^${t.config.baseUrl}storage/${binary.id}\\?exp=\\d+&sig=`),
    );
    const docId = res.json().entry[1].resource.id as string;
    const stored = await t.services.systemRepo(t.testProject.projectId).readResource('DocumentReference', docId);
    expect(
      (stored.resource as unknown as { content: { attachment: { url: string } }[] }).content[0].attachment.url,
    ).toBe(`Binary/${binary.id}`);
    const raw = await t.app.inject({
      url: `/fhir/R4/Binary/${binary.id}`,
      headers: { ...t.authHeaders, accept: 'text/plain' },
    });
    expect(raw.statusCode).toBe(200);
    expect(raw.body).toBe('hello from a transaction');
    const row = await t.pool.query('SELECT content FROM resource WHERE resource_type = $1 AND id = $2', [
      'Binary',
      binary.id,
    ]);
    expect(row.rows[0].content).not.toContain(bytes.toString('base64'));
  });

  it('caps the number of entries', async () => {
    const res = await post(patientRecordBundle(501));
    expect(res.statusCode).toBe(413);
    expect(res.json().resourceType).toBe('OperationOutcome');
  });

  it('imports a 150-entry patient record with as many database round trips as a 10-entry one', async () => {
    const queries = countQueries(t.pool);
    await post(patientRecordBundle(150)); // warm up
    queries.reset();
    expect((await post(patientRecordBundle(10))).statusCode).toBe(200);
    const small = queries.reset();
    const started = performance.now();
    const rounds = 5;
    for (let i = 0; i < rounds; i++) {
      expect((await post(patientRecordBundle(150))).statusCode).toBe(200);
    }
    const seconds = (performance.now() - started) / 1000;
    const large = queries.reset() / rounds;
    console.log(
      `transaction import (in-process, sequential): ${Math.round((150 * rounds) / seconds)} resources/s, ` +
        `${large} queries per 150-entry transaction (${small} for 10 entries)`,
    );
    // Creates go to the database in multi-row statements, never one round trip per entry (that
    // would be 140 more). The margin covers the access trail's writer, which flushes its buffer on
    // the same pool now and then while the five transactions run.
    expect(large).toBeLessThan(small + 20);
  });
});

/** Counts the statements sent through a pool (directly or by its clients), to catch per-entry round trips. */
function countQueries(pool: TestApp['pool']): { reset(): number } {
  let n = 0;
  const counted = new WeakSet<object>();
  const wrap = (target: { query: (...args: never[]) => unknown }) => {
    const query = target.query.bind(target) as (...args: unknown[]) => unknown;
    (target as { query: unknown }).query = (...args: unknown[]) => {
      n++;
      return query(...args);
    };
  };
  wrap(pool);
  const track = (client: { query: (...args: never[]) => unknown }) => {
    if (!counted.has(client)) {
      counted.add(client);
      wrap(client);
    }
    return client;
  };
  // pg's Pool.query itself checks a client out with a callback; both styles are kept working.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { connect: unknown }).connect = (...args: unknown[]) => {
    const callback = args[0] as ((err: unknown, client: never, release: unknown) => void) | undefined;
    if (typeof callback === 'function') {
      return connect((err: unknown, client: never, release: unknown) =>
        callback(err, client ? (track(client) as never) : client, release),
      );
    }
    return (connect() as Promise<never>).then(track);
  };
  return {
    reset() {
      const value = n;
      n = 0;
      return value;
    },
  };
}

describe('batch', () => {
  it('runs each entry on its own: failures become outcomes, the rest succeed', async () => {
    const existing = await create({ resourceType: 'Patient' });
    const res = await post({
      resourceType: 'Bundle',
      type: 'batch',
      entry: [
        { resource: { resourceType: 'Patient', gender: 'other' }, request: { method: 'POST', url: 'Patient' } },
        { resource: { resourceType: 'Nonsense' }, request: { method: 'POST', url: 'Nonsense' } },
        { request: { method: 'GET', url: `Patient/${existing.id}` } },
        { request: { method: 'GET', url: 'Patient/does-not-exist' } },
        { request: { method: 'DELETE', url: `Patient/${existing.id}` } },
        { request: { url: 'Patient' } },
      ],
    });
    expect(res.statusCode).toBe(200);
    const entries = res.json().entry as ResponseEntry[];
    expect(res.json().type).toBe('batch-response');
    expect(entries.map((e) => e.response.status.split(' ')[0])).toEqual(['201', '404', '200', '404', '204', '400']);
    expect(entries[1].response.outcome?.resourceType).toBe('OperationOutcome');
    expect(entries[2].resource!.id).toBe(existing.id);
    expect(entries[5].response.outcome?.issue[0].expression).toEqual(['Bundle.entry[5].request.method']);
  });

  it('answers only with responses under Prefer: return=minimal', async () => {
    const res = await post(
      {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [{ resource: { resourceType: 'Patient' }, request: { method: 'POST', url: 'Patient' } }],
      },
      { prefer: 'return=minimal' },
    );
    const entry = res.json().entry[0];
    expect(entry.resource).toBeUndefined();
    expect(entry.response.status).toBe('201 Created');
  });

  it('rejects a Bundle of another type and a body that is not a Bundle', async () => {
    expect((await post({ resourceType: 'Bundle', type: 'collection' })).statusCode).toBe(400);
    expect((await post({ resourceType: 'Patient' })).statusCode).toBe(400);
  });
});
