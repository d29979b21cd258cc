/**
 * `[base]/Patient/<id>` names one resource on the whole server: a project cannot write an id
 * another project holds (update-as-create, transaction and batch PUT, conditional update), also
 * when racing for a new id, and no Bundle the server answers carries two entries for one URL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, OperationOutcome, Resource } from '@hearth/core';
import { waitFor } from '../bots/testing.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject, signIn, type TestProject } from '../test/auth.js';

const FHIR = 'application/fhir+json';
type Headers = Record<string, string>;

let t: TestApp;
let a: TestProject;
let b: TestProject;
let superAdmin: Headers;

beforeAll(async () => {
  t = await createTestApp({ config: { databasePoolSize: 24 } });
  a = await createTestProject(t.app, t.services, 'Project A');
  b = await createTestProject(t.app, t.services, 'Project B');
  const tokens = await signIn(t.app, t.superAdmin.email, t.superAdmin.password);
  superAdmin = { authorization: `Bearer ${tokens.access_token}` };
}, 60000);
afterAll(async () => {
  await t?.close();
});

function send(method: string, url: string, headers: Headers, payload?: unknown) {
  return t.app.inject({
    method: method as 'GET',
    url: `/fhir/R4/${url}`,
    headers: { ...headers, ...(payload ? { 'content-type': FHIR } : {}) },
    ...(payload ? { payload: payload as Resource } : {}),
  });
}

async function put(p: TestProject, resource: Resource & { id: string }) {
  return send('PUT', `${resource.resourceType}/${resource.id}`, p.headers, resource);
}

/** The refusal of an id held elsewhere: 409, says what and where, and never which project holds it. */
function expectIdTaken(
  res: { statusCode: number; body: string },
  type: string,
  id: string,
  holder: TestProject,
  expression = `${type}.id`,
) {
  expect(res.statusCode, res.body).toBe(409);
  const outcome = JSON.parse(res.body) as OperationOutcome;
  expect(outcome.resourceType).toBe('OperationOutcome');
  expect(outcome.issue[0]).toMatchObject({ severity: 'error', code: 'duplicate', expression: [expression] });
  expect(outcome.issue[0].details?.text).toContain(`${type}/${id} already exists`);
  expect(res.body).not.toContain(holder.projectId);
  expect(res.body).not.toContain('Project A');
}

async function rowsOf(type: string, id: string): Promise<{ project_id: string; version_id: number }[]> {
  const cur = await t.pool.query<{ project_id: string; version_id: number }>(
    `SELECT project_id, version_id FROM "${type}" WHERE resource_type = $1 AND id = $2`,
    [type, id],
  );
  return cur.rows;
}

async function historyOf(type: string, id: string): Promise<{ project_id: string; version_id: number }[]> {
  const hist = await t.pool.query<{ project_id: string; version_id: number }>(
    `SELECT project_id, version_id FROM "${type}_History" WHERE resource_type = $1 AND id = $2 ORDER BY version_id`,
    [type, id],
  );
  return hist.rows;
}

/**
 * Bundle.entry.fullUrl is unique (bdl-7), except that a history Bundle holds several versions of
 * one resource: there (fullUrl, versionId) is.
 */
function expectDistinctEntries(bundle: Bundle, what: string): number {
  const history = bundle.type === 'history';
  const keys = (bundle.entry ?? [])
    .filter((e) => e.fullUrl)
    .map((e) => (history ? `${e.fullUrl} ${e.resource?.meta?.versionId ?? e.response?.etag}` : e.fullUrl));
  expect(new Set(keys).size, `${what}: ${keys.join(', ')}`).toBe(keys.length);
  return keys.length;
}

describe('an id held by one project', () => {
  const id = `shared-${randomUUID()}`;

  beforeAll(async () => {
    const created = await put(a, { resourceType: 'Patient', id, name: [{ family: 'OfA' }] });
    expect(created.statusCode, created.body).toBe(201);
  });

  it('is refused to another project on update-as-create, and the holder keeps its resource', async () => {
    expectIdTaken(await put(b, { resourceType: 'Patient', id, name: [{ family: 'OfB' }] }), 'Patient', id, a);
    // With If-Match (a client that believes it updates its own): no version of B's own is current.
    const res = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Patient/${id}`,
      headers: { ...b.headers, 'content-type': FHIR, 'if-match': 'W/"1"' },
      payload: { resourceType: 'Patient', id, name: [{ family: 'OfB' }] },
    });
    expect(res.statusCode, res.body).toBe(412);
    expect(res.body).not.toContain(a.projectId);
    expect(await rowsOf('Patient', id)).toEqual([{ project_id: a.projectId, version_id: 1 }]);
    expect((await historyOf('Patient', id)).map((r) => r.project_id)).toEqual([a.projectId]);
    // B sees nothing; A still reads its own.
    expect((await send('GET', `Patient/${id}`, b.headers)).statusCode).toBe(404);
    expect((await send('GET', `Patient/${id}`, a.headers)).json().name[0].family).toBe('OfA');
  });

  it('stays an update within its own project', async () => {
    const res = await put(a, { resourceType: 'Patient', id, name: [{ family: 'OfA2' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().meta.versionId).toBe('2');
  });

  it('is refused in a transaction (nothing of it is written) and in a batch entry', async () => {
    const marker = `tx-${randomUUID()}`;
    const tx = await send('POST', '', b.headers, {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          request: { method: 'POST', url: 'Observation' },
          resource: {
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'x' },
            identifier: [{ system: 'urn:test', value: marker }],
          },
        },
        {
          request: { method: 'PUT', url: `Patient/${id}` },
          resource: { resourceType: 'Patient', id, name: [{ family: 'OfBInTx' }] },
        },
      ],
    });
    expectIdTaken(tx, 'Patient', id, a, 'Bundle.entry[1].resource.id');
    const observations = await send('GET', `Observation?identifier=urn:test|${marker}`, b.headers);
    expect(observations.json().entry ?? []).toEqual([]);

    const batch = await send('POST', '', b.headers, {
      resourceType: 'Bundle',
      type: 'batch',
      entry: [
        {
          request: { method: 'PUT', url: `Patient/${id}` },
          resource: { resourceType: 'Patient', id, name: [{ family: 'OfBInBatch' }] },
        },
      ],
    });
    expect(batch.statusCode, batch.body).toBe(200);
    const entry = (batch.json() as Bundle).entry?.[0];
    expect(entry?.response?.status).toMatch(/^409/);
    expect(JSON.stringify(entry)).not.toContain(a.projectId);
    expect(await rowsOf('Patient', id)).toEqual([{ project_id: a.projectId, version_id: 2 }]);
  });

  it('is refused on a conditional update that would create', async () => {
    const res = await send('PUT', `Patient?identifier=urn:test|nobody-${randomUUID()}`, b.headers, {
      resourceType: 'Patient',
      id,
      name: [{ family: 'OfBConditional' }],
    });
    expectIdTaken(res, 'Patient', id, a);
    expect(await rowsOf('Patient', id)).toEqual([{ project_id: a.projectId, version_id: 2 }]);
  });

  it('stays taken once deleted: its history still answers to it; the holder can re-create it', async () => {
    const gone = `gone-${randomUUID()}`;
    expect((await put(a, { resourceType: 'Patient', id: gone })).statusCode).toBe(201);
    expect((await send('DELETE', `Patient/${gone}`, a.headers)).statusCode).toBe(204);
    expectIdTaken(await put(b, { resourceType: 'Patient', id: gone }), 'Patient', gone, a);
    const again = await put(a, { resourceType: 'Patient', id: gone, name: [{ family: 'Back' }] });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().meta.versionId).toBe('3');
    expect((await historyOf('Patient', gone)).map((r) => [r.project_id, r.version_id])).toEqual([
      [a.projectId, 1],
      [a.projectId, 2],
      [a.projectId, 3],
    ]);
  });

  it('is one resource to a super admin: read, _id search, _include', async () => {
    const read = await send('GET', `Patient/${id}`, superAdmin);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().name[0].family).toBe('OfA2');
    const byId = (await send('GET', `Patient?_id=${id}`, superAdmin)).json() as Bundle;
    expect(byId.entry?.map((e) => e.resource?.id)).toEqual([id]);
    expectDistinctEntries(byId, 'Patient?_id');
    // B's Observation points at the id; B cannot create a Patient of its own under it.
    const obs = await send('POST', 'Observation', b.headers, {
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'points at A' },
      subject: { reference: `Patient/${id}` },
    });
    expect(obs.statusCode, obs.body).toBe(201);
    const included = (
      await send('GET', `Observation?_id=${obs.json().id}&_include=Observation:subject`, superAdmin)
    ).json() as Bundle;
    expect(included.entry?.map((e) => `${e.resource?.resourceType}/${e.resource?.id}`).sort()).toEqual([
      `Observation/${obs.json().id}`,
      `Patient/${id}`,
    ]);
    expectDistinctEntries(included, '_include');
  });
});

describe('a new id wanted by two projects at once', () => {
  it('20 concurrent PUT-as-create from two projects: exactly one project wins, the other gets 409', async () => {
    const id = `race-${randomUUID()}`;
    const writers = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b));
    const answers = await Promise.all(
      writers.map((p, i) => put(p, { resourceType: 'Patient', id, name: [{ family: `W${i}` }] })),
    );
    const byProject = (p: TestProject) => answers.filter((_, i) => writers[i] === p).map((r) => r.statusCode);
    const aWon = byProject(a).some((s) => s < 300);
    const [winner, loser] = aWon ? [a, b] : [b, a];
    // The winner's writes all land: one creates, the others update it in turn.
    const won = byProject(winner).sort();
    expect(won, JSON.stringify(won)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    answers.forEach((res, i) => {
      if (writers[i] === loser) {
        expectIdTaken(res, 'Patient', id, winner);
      }
    });
    expect(await rowsOf('Patient', id)).toEqual([{ project_id: winner.projectId, version_id: 10 }]);
    const history = await historyOf('Patient', id);
    expect(history.map((r) => r.version_id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(history.map((r) => r.project_id))).toEqual(new Set([winner.projectId]));
  });
});

describe('no Bundle the server answers carries two entries with one fullUrl', () => {
  const patientId = `everyone-${randomUUID()}`;
  const observationIds: string[] = [];

  beforeAll(async () => {
    // A's Patient and Observations; B tries every write of the same ids and writes its own
    // Observations about that Patient.
    expect((await put(a, { resourceType: 'Patient', id: patientId, name: [{ family: 'Shared' }] })).statusCode).toBe(
      201,
    );
    for (const [i, p] of [a, b, a, b].entries()) {
      const obsId = `obs-${i}-${randomUUID()}`;
      observationIds.push(obsId);
      const res = await put(p, {
        resourceType: 'Observation',
        id: obsId,
        status: 'final',
        code: { coding: [{ system: 'urn:test', code: 'fullurl' }] },
        subject: { reference: `Patient/${patientId}` },
      });
      expect(res.statusCode, res.body).toBe(201);
      // The other project's attempt at the same Observation id.
      expect(
        (await put(p === a ? b : a, { resourceType: 'Observation', id: obsId, status: 'final', code: { text: 'x' } }))
          .statusCode,
      ).toBe(409);
    }
    expect((await put(b, { resourceType: 'Patient', id: patientId })).statusCode).toBe(409);
    // A second version, so that history has several entries per resource.
    expect((await put(a, { resourceType: 'Patient', id: patientId, name: [{ family: 'Shared2' }] })).statusCode).toBe(
      200,
    );
  });

  const readers = (): [string, Headers][] => [
    ['super admin', superAdmin],
    ['A', a.headers],
    ['B', b.headers],
  ];

  it('search, _include, _revinclude', async () => {
    for (const [who, headers] of readers()) {
      for (const url of [
        `Patient?_id=${patientId}`,
        `Patient?_id=${patientId}&_revinclude=Observation:subject`,
        'Observation?code=urn:test|fullurl&_include=Observation:subject',
        `Observation?_id=${observationIds.join(',')}`,
        `Observation?subject=Patient/${patientId}`,
      ]) {
        const res = await send('GET', url, headers);
        expect(res.statusCode, `${who} ${url}: ${res.body}`).toBe(200);
        expectDistinctEntries(res.json(), `${who} ${url}`);
      }
    }
    // The super admin sees every Observation about the Patient, and the Patient once.
    const all = (
      await send('GET', 'Observation?code=urn:test|fullurl&_include=Observation:subject', superAdmin)
    ).json() as Bundle;
    expect(expectDistinctEntries(all, 'all')).toBe(5);
  });

  it('history of an instance, a type and the system', async () => {
    for (const [who, headers] of readers()) {
      for (const url of [`Patient/${patientId}/_history`, 'Patient/_history', 'Observation/_history', '_history']) {
        const res = await send('GET', url, headers);
        if (res.statusCode === 404 && who === 'B' && url.startsWith('Patient/')) {
          continue; // B holds no version of that Patient.
        }
        expect(res.statusCode, `${who} ${url}: ${res.body}`).toBe(200);
        expectDistinctEntries(res.json(), `${who} ${url}`);
      }
    }
    const instance = (await send('GET', `Patient/${patientId}/_history`, superAdmin)).json() as Bundle;
    expect(instance.entry?.map((e) => e.resource?.meta?.versionId)).toEqual(['2', '1']);
  });

  it('transaction and batch responses', async () => {
    const entry = (method: string, url: string, resource?: Resource) => ({ request: { method, url }, resource });
    for (const type of ['transaction', 'batch']) {
      const res = await send('POST', '', a.headers, {
        resourceType: 'Bundle',
        type,
        entry: [
          entry('PUT', `Patient/${patientId}`, { resourceType: 'Patient', id: patientId, name: [{ family: type }] }),
          entry('POST', 'Patient', { resourceType: 'Patient', name: [{ family: `new ${type}` }] }),
          entry('POST', 'Patient', { resourceType: 'Patient', name: [{ family: `new ${type}` }] }),
          entry('GET', `Patient/${patientId}`),
          entry('GET', `Patient?_id=${patientId}`),
        ],
      });
      expect(res.statusCode, res.body).toBe(200);
      expectDistinctEntries(res.json(), type);
    }
  });

  it('$everything', async () => {
    for (const [who, headers] of readers().slice(0, 2)) {
      const res = await send('GET', `Patient/${patientId}/$everything`, headers);
      expect(res.statusCode, `${who}: ${res.body}`).toBe(200);
      expect(expectDistinctEntries(res.json(), `${who} $everything`)).toBeGreaterThan(1);
    }
  });

  it('bulk export: one manifest entry per file, one line per resource', async () => {
    const kick = await t.app.inject({ url: '/fhir/R4/$export', headers: { ...a.headers, prefer: 'respond-async' } });
    expect(kick.statusCode, kick.body).toBe(202);
    const status = new URL(kick.headers['content-location'] as string, t.baseUrl);
    const done = await waitFor(async () => {
      const poll = await t.app.inject({ url: status.pathname, headers: a.headers });
      return poll.statusCode === 202 ? undefined : poll;
    }, 60000);
    expect(done.statusCode, done.body).toBe(200);
    const manifest = done.json() as { output: { type: string; url: string }[] };
    const urls = manifest.output.map((o) => o.url);
    expect(new Set(urls).size).toBe(urls.length);
    const seen: string[] = [];
    for (const out of manifest.output) {
      const file = await t.app.inject({
        url: new URL(out.url).pathname,
        headers: { ...a.headers, accept: 'application/fhir+ndjson' },
      });
      expect(file.statusCode).toBe(200);
      for (const line of file.body.split('\n').filter(Boolean)) {
        const r = JSON.parse(line) as Resource;
        seen.push(`${r.resourceType}/${r.id}`);
      }
    }
    expect(seen).toContain(`Patient/${patientId}`);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
