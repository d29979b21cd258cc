/**
 * Bulk Data $import end to end: a manifest naming a Binary and a URL, the job polled to its
 * manifest, resources searchable and indexed, per-line errors as OperationOutcome NDJSON, existing
 * ids updated, outbound address rules, cancellation, and kick-off errors.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember } from '../test/auth.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const FHIR = 'application/fhir+json';
let t: TestApp;
let server: Server;
let served = '';

const path = (url: string) => new URL(url).pathname;

async function binary(text: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/fhir/R4/Binary',
    headers: { ...t.authHeaders, 'content-type': 'application/fhir+ndjson' },
    payload: text,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

function manifest(inputs: { type: string; url: string }[]): Json {
  return {
    resourceType: 'Parameters',
    parameter: [
      { name: 'inputFormat', valueCode: 'application/fhir+ndjson' },
      { name: 'inputSource', valueUri: 'https://source.example.org/' },
      ...inputs.map((i) => ({
        name: 'input',
        part: [
          { name: 'type', valueCode: i.type },
          { name: 'url', valueUri: i.url },
        ],
      })),
    ],
  };
}

async function kickOff(body: Json, prefer = true) {
  return t.app.inject({
    method: 'POST',
    url: '/fhir/R4/$import',
    headers: { ...t.authHeaders, 'content-type': FHIR, ...(prefer ? { prefer: 'respond-async' } : {}) },
    payload: body,
  });
}

async function importOf(body: Json, headers: Record<string, string> = t.authHeaders): Promise<Json> {
  const kick = await t.app.inject({
    method: 'POST',
    url: '/fhir/R4/$import',
    headers: { ...headers, 'content-type': FHIR, prefer: 'respond-async' },
    payload: body,
  });
  expect(kick.statusCode, kick.body).toBe(202);
  const location = path(kick.headers['content-location'] as string);
  for (let i = 0; i < 600; i++) {
    const poll = await t.app.inject({ url: location, headers });
    if (poll.statusCode !== 202) {
      expect(poll.statusCode, poll.body).toBe(200);
      return poll.json();
    }
    expect(poll.headers['x-progress']).toBeTruthy();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('import did not finish');
}

async function lines(url: string, headers: Record<string, string> = t.authHeaders): Promise<Json[]> {
  const res = await t.app.inject({ url: path(url), headers: { ...headers, accept: 'application/fhir+ndjson' } });
  return res.body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);
}

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/fhir+ndjson' });
    res.end(served);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t = await createTestApp({ config: { outboundAllowList: ['127.0.0.1'] } });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await new Promise((r) => server.close(r));
});

describe('POST [base]/$import', () => {
  it('imports a Binary and a URL, indexes what it wrote, and reports bad lines with their line numbers', async () => {
    const patients = [
      { resourceType: 'Patient', id: 'imp-1', gender: 'female', name: [{ family: 'Importa' }] },
      { resourceType: 'Patient', id: 'imp-2', gender: 'male', name: [{ family: 'Importb' }] },
    ];
    const bin = await binary(
      [
        ...patients.map((p) => JSON.stringify(p)),
        '{not json',
        JSON.stringify({ resourceType: 'Observation', id: 'x' }),
        JSON.stringify({ resourceType: 'Patient', id: 'imp-bad', gender: 'nope' }),
      ].join('\n'),
    );
    served = [
      JSON.stringify({
        resourceType: 'Observation',
        id: 'imp-obs',
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
        subject: { reference: 'Patient/imp-1' },
      }),
    ].join('\n');
    const { port } = server.address() as AddressInfo;
    const result = await importOf(
      manifest([
        { type: 'Patient', url: `Binary/${bin}` },
        { type: 'Observation', url: `http://127.0.0.1:${port}/obs.ndjson` },
      ]),
    );
    expect(result.output).toEqual([
      { type: 'Patient', url: `Binary/${bin}`, count: 2 },
      { type: 'Observation', url: `http://127.0.0.1:${port}/obs.ndjson`, count: 1 },
    ]);
    expect(result.error).toHaveLength(1);
    const errors = await lines(result.error[0].url as string);
    expect(errors.map((e) => e.issue[0].diagnostics)).toEqual([
      `Binary/${bin} line 3: not JSON`,
      `Binary/${bin} line 4: not a Patient`,
      expect.stringMatching(new RegExp(`^Binary/${bin} line 5: .*gender`)),
    ]);
    // Indexed like any write: search by token, by reference.
    const search = await t.app.inject({ url: '/fhir/R4/Patient?gender=female&name=Importa', headers: t.authHeaders });
    expect(search.json().entry.map((e: Json) => e.resource.id)).toEqual(['imp-1']);
    const obs = await t.app.inject({
      url: '/fhir/R4/Observation?subject=Patient/imp-1&code=8867-4',
      headers: t.authHeaders,
    });
    expect(obs.json().entry).toHaveLength(1);
    const history = await t.app.inject({ url: '/fhir/R4/Patient/imp-2/_history', headers: t.authHeaders });
    expect(history.json().entry).toHaveLength(1);
  }, 120_000);

  it('updates resources whose ids are already stored', async () => {
    const bin = await binary(JSON.stringify({ resourceType: 'Patient', id: 'imp-1', gender: 'other' }));
    const result = await importOf(manifest([{ type: 'Patient', url: `Binary/${bin}` }]));
    expect(result.output[0].count).toBe(1);
    const read = await t.app.inject({ url: '/fhir/R4/Patient/imp-1', headers: t.authHeaders });
    expect(read.json()).toMatchObject({ gender: 'other', meta: { versionId: '2' } });
  }, 60_000);

  it('writes a line whose id came earlier in its file as the next version, and refuses text the database cannot store', async () => {
    const bin = await binary(
      [
        JSON.stringify({ resourceType: 'Patient', id: 'imp-dup', gender: 'female' }),
        JSON.stringify({ resourceType: 'Patient', id: 'imp-other' }),
        JSON.stringify({ resourceType: 'Patient', id: 'imp-dup', gender: 'male' }),
        '{"resourceType":"Patient","id":"imp-nul","name":[{"family":"a\\u0000b"}]}',
      ].join('\n'),
    );
    const result = await importOf(manifest([{ type: 'Patient', url: `Binary/${bin}` }]));
    expect(result.output[0].count).toBe(3);
    const errors = await lines(result.error[0].url as string);
    expect(errors.map((e) => e.issue[0].diagnostics)).toEqual([
      `Binary/${bin} line 4: Patient.name[0].family contains a NUL character (U+0000), which is not allowed`,
    ]);
    const read = await t.app.inject({ url: '/fhir/R4/Patient/imp-dup', headers: t.authHeaders });
    expect(read.json()).toMatchObject({ gender: 'male', meta: { versionId: '2' } });
    const history = await t.app.inject({ url: '/fhir/R4/Patient/imp-dup/_history', headers: t.authHeaders });
    expect(history.json().entry).toHaveLength(2);
  }, 60_000);

  it('writes as the requester: their access policy refuses lines one by one, the others are written', async () => {
    const policy = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/AccessPolicy',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: {
        resourceType: 'AccessPolicy',
        resource: [
          { resourceType: 'Observation', criteria: 'Observation?status=final' },
          { resourceType: 'AsyncJob' },
          { resourceType: 'Binary' },
        ],
      },
    });
    expect(policy.statusCode, policy.body).toBe(201);
    const member = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.json().id}` } },
    });
    const observation = (id: string, status: string) =>
      JSON.stringify({ resourceType: 'Observation', id, status, code: { text: 'policy' } });
    const observations = await binary(
      [
        observation('imp-final', 'final'),
        observation('imp-prelim', 'preliminary'),
        observation('imp-final2', 'final'),
      ].join('\n'),
    );
    const patients = await binary(JSON.stringify({ resourceType: 'Patient', id: 'imp-not-allowed' }));
    const result = await importOf(
      manifest([
        { type: 'Observation', url: `Binary/${observations}` },
        { type: 'Patient', url: `Binary/${patients}` },
      ]),
      member.headers,
    );
    expect(result.output.map((o: Json) => o.count)).toEqual([2, 0]);
    const errors = await lines(result.error[0].url as string, member.headers);
    expect(errors.map((e) => e.issue[0].diagnostics)).toEqual([
      expect.stringMatching(new RegExp(`^Binary/${observations} line 2: `)),
      expect.stringMatching(new RegExp(`^Binary/${patients} line 1: `)),
    ]);
    for (const [url, status] of [
      ['Observation/imp-final', 200],
      ['Observation/imp-final2', 200],
      ['Observation/imp-prelim', 404],
      ['Patient/imp-not-allowed', 404],
    ] as const) {
      expect((await t.app.inject({ url: `/fhir/R4/${url}`, headers: t.authHeaders })).statusCode, url).toBe(status);
    }
  }, 60_000);

  it('fetches URLs through the outbound address rules', async () => {
    const result = await importOf(manifest([{ type: 'Patient', url: 'http://10.255.255.1/p.ndjson' }]));
    expect(result.output[0].count).toBe(0);
    const errors = await lines(result.error[0].url as string);
    expect(errors[0].issue[0].diagnostics).toMatch(/could not be read: .*(blocked|not allowed|private)/i);
  }, 60_000);

  it('is cancelled by DELETE on its status URL', async () => {
    const bin = await binary(JSON.stringify({ resourceType: 'Patient', id: 'imp-c' }));
    const kick = await kickOff(manifest([{ type: 'Patient', url: `Binary/${bin}` }]));
    const location = path(kick.headers['content-location'] as string);
    expect((await t.app.inject({ method: 'DELETE', url: location, headers: t.authHeaders })).statusCode).toBe(202);
    expect((await t.app.inject({ url: location, headers: t.authHeaders })).statusCode).toBe(404);
  });

  it('answers 400 for a synchronous request or a malformed manifest', async () => {
    expect((await kickOff(manifest([{ type: 'Patient', url: 'Binary/x' }]), false)).statusCode).toBe(400);
    const badType = await kickOff(manifest([{ type: 'Nope', url: 'Binary/x' }]));
    expect(badType.statusCode).toBe(400);
    expect(badType.json().issue[0].diagnostics ?? badType.json().issue[0].details.text).toMatch(/Nope/);
    const badUrl = await kickOff(manifest([{ type: 'Patient', url: 'file:///etc/passwd' }]));
    expect(badUrl.statusCode).toBe(400);
    const empty = await kickOff({ resourceType: 'Parameters', parameter: [] });
    expect(empty.statusCode).toBe(400);
    const format = await kickOff({
      resourceType: 'Parameters',
      parameter: [{ name: 'inputFormat', valueCode: 'text/csv' }],
    });
    expect(format.statusCode).toBe(400);
  });
});
