/** Bulk Data $export end to end: kick-off, polling, the manifest, NDJSON downloads, filters, cancel, isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationOutcome, Resource } from '@hearth/core';
import { resourceTable } from '../storage/tables.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, createTestProject } from '../test/auth.js';
import { waitFor } from '../bots/testing.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
type Headers = Record<string, string>;
type Saved = Resource & { id: string; meta: { lastUpdated: string } };

interface Manifest {
  transactionTime: string;
  request: string;
  requiresAccessToken: boolean;
  output: { type: string; url: string; count: number }[];
  error: { type: string; url: string; count: number }[];
}

async function post(resource: Resource, headers: Headers = t.authHeaders): Promise<Saved> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType}`,
    headers: { ...headers, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

const path = (url: string) => (url.startsWith('http') ? new URL(url).pathname + new URL(url).search : url);

async function kickOff(url: string, headers: Headers = t.authHeaders, prefer = true) {
  return t.app.inject({ url, headers: { ...headers, ...(prefer ? { prefer: 'respond-async' } : {}) } });
}

/** Kicks off, polls the status URL until done, answers the manifest. */
async function exportOf(url: string, headers: Headers = t.authHeaders): Promise<Manifest> {
  const kick = await kickOff(url, headers);
  expect(kick.statusCode, kick.body).toBe(202);
  const location = kick.headers['content-location'] as string;
  expect(location).toMatch(/\/fhir\/R4\/job\/[\w-]+\/status$/);
  const done = await waitFor(async () => {
    const poll = await t.app.inject({ url: path(location), headers });
    if (poll.statusCode === 202) {
      expect(poll.headers['x-progress']).toBeTruthy();
      return undefined;
    }
    return poll;
  }, 60000);
  expect(done.statusCode, done.body).toBe(200);
  expect(done.headers['content-type']).toMatch(/^application\/json/);
  return done.json();
}

/** Downloads every output file of the manifest: resources per type, each file's line count checked. */
async function download(manifest: Manifest, headers: Headers = t.authHeaders): Promise<Map<string, Resource[]>> {
  const byType = new Map<string, Resource[]>();
  for (const out of manifest.output) {
    const res = await t.app.inject({ url: path(out.url), headers: { ...headers, accept: 'application/fhir+ndjson' } });
    expect(res.statusCode).toBe(200);
    const lines = res.body.split('\n').filter((l) => l !== '');
    expect(res.body.endsWith('\n')).toBe(true);
    expect(lines.length).toBe(out.count);
    const resources = lines.map((l) => JSON.parse(l) as Resource);
    for (const r of resources) expect(r.resourceType).toBe(out.type);
    byType.set(out.type, [...(byType.get(out.type) ?? []), ...resources]);
  }
  return byType;
}

/** Downloads the manifest's error files: OperationOutcomes, one a line, as many as each entry counts. */
async function errorsOf(manifest: Manifest, headers: Headers = t.authHeaders): Promise<OperationOutcome[]> {
  const outcomes: OperationOutcome[] = [];
  for (const file of manifest.error) {
    expect(file.type).toBe('OperationOutcome');
    const res = await t.app.inject({ url: path(file.url), headers: { ...headers, accept: 'application/fhir+ndjson' } });
    expect(res.statusCode, res.body).toBe(200);
    const lines = res.body.split('\n').filter((l) => l !== '');
    expect(lines.length).toBe(file.count);
    outcomes.push(...lines.map((l) => JSON.parse(l) as OperationOutcome));
  }
  for (const o of outcomes) expect(o).toMatchObject({ resourceType: 'OperationOutcome', issue: [{}] });
  return outcomes;
}

/** Each outcome's one issue, as `severity code: diagnostics`. */
const issuesOf = (outcomes: OperationOutcome[]) =>
  outcomes.map((o) => `${o.issue[0].severity} ${o.issue[0].code}: ${o.issue[0].diagnostics}`);

const idsOf = (list: Resource[] | undefined) => (list ?? []).map((r) => r.id as string).sort();

let alice: Saved;
let bob: Saved;
let carol: Saved;
let org: Saved;
let aliceObs: Saved[];
let bobObs: Saved;
let group: Saved;

beforeAll(async () => {
  // A small Binary limit: a type with more output than that is split over several files.
  t = await createTestApp({ config: { maxBinaryBytes: 30000 } });
  org = await post({ resourceType: 'Organization', name: 'Clinic' });
  alice = await post({ resourceType: 'Patient', name: [{ family: 'Alice' }] });
  bob = await post({ resourceType: 'Patient', name: [{ family: 'Bob' }] });
  carol = await post({ resourceType: 'Patient', name: [{ family: 'Carol' }] });
  aliceObs = [];
  for (let i = 0; i < 40; i++) {
    aliceObs.push(
      await post({
        resourceType: 'Observation',
        status: i % 2 === 0 ? 'final' : 'preliminary',
        code: { coding: [{ system: 'http://loinc.org', code: '29463-7', display: 'Body weight' }] },
        valueQuantity: { value: 60 + i, unit: 'kg', system: 'http://unitsofmeasure.org', code: 'kg' },
        subject: { reference: `Patient/${alice.id}` },
        note: [{ text: `reading ${i} `.padEnd(800, '.') }],
      } as Resource),
    );
  }
  bobObs = await post({
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'weight' },
    subject: { reference: `Patient/${bob.id}` },
  } as Resource);
  group = await post({
    resourceType: 'Group',
    type: 'person',
    actual: true,
    member: [{ entity: { reference: `Patient/${alice.id}` } }, { entity: { reference: `Patient/${carol.id}` } }],
  } as Resource);
});
afterAll(async () => {
  await t?.close();
});

describe('$export kick-off', () => {
  it('needs Prefer: respond-async and a supported _outputFormat, _since and _type', async () => {
    const cases: [string, boolean][] = [
      ['/fhir/R4/$export', false],
      ['/fhir/R4/$export?_outputFormat=text/csv', true],
      ['/fhir/R4/$export?_since=last-week', true],
      ['/fhir/R4/$export?_type=NotAType', true],
      ['/fhir/R4/Patient/$export?_type=Organization', true],
      ['/fhir/R4/$export?_typeFilter=Observation', true],
      ['/fhir/R4/$export?_typeFilter=Observation%3Fno-such-param%3D1', true],
      ['/fhir/R4/$export?_typeFilter=Observation%3F_count%3D5', true],
      ['/fhir/R4/$export?_type=Patient&_typeFilter=Observation%3Fstatus%3Dfinal', true],
    ];
    for (const [url, prefer] of cases) {
      const res = await kickOff(url, t.authHeaders, prefer);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().resourceType).toBe('OperationOutcome');
    }
    expect((await kickOff('/fhir/R4/Group/no-such-group/$export')).statusCode).toBe(404);
  });

  it('is listed in the CapabilityStatement with Patient/$everything', async () => {
    const cs = (await t.app.inject({ url: '/fhir/R4/metadata' })).json();
    const names = (list: { name: string }[] | undefined) => (list ?? []).map((o) => o.name);
    expect(names(cs.rest[0].operation)).toContain('export');
    const typeOps = (type: string) =>
      names(cs.rest[0].resource.find((r: { type: string }) => r.type === type).operation);
    expect(typeOps('Patient')).toEqual(expect.arrayContaining(['export', 'everything']));
    expect(typeOps('Group')).toContain('export');
  });
});

describe('$export', () => {
  it('system level: every type the caller can read, NDJSON counts matching search', async () => {
    const manifest = await exportOf('/fhir/R4/$export');
    expect(manifest).toMatchObject({ requiresAccessToken: true, error: [] });
    expect(manifest.request).toContain('/fhir/R4/$export');
    expect(Date.parse(manifest.transactionTime)).not.toBeNaN();
    // 40 Observations of about 1 KB do not fit one 27 000-byte file.
    expect(manifest.output.filter((o) => o.type === 'Observation').length).toBeGreaterThan(1);
    const byType = await download(manifest);
    expect(idsOf(byType.get('Patient'))).toEqual(expect.arrayContaining([alice.id, bob.id, carol.id].sort()));
    expect(idsOf(byType.get('Observation'))).toEqual([...aliceObs.map((o) => o.id), bobObs.id].sort());
    expect(idsOf(byType.get('Organization'))).toEqual([org.id]);
    expect(idsOf(byType.get('Group'))).toEqual([group.id]);
    expect(byType.has('Binary')).toBe(false);
    // Each type holds as many as a search finds in the project (not the shared terminology project's).
    for (const [type, list] of byType) {
      const search = await t.app.inject({ url: `/fhir/R4/${type}?_count=1000`, headers: t.authHeaders });
      const own = (search.json().entry as { resource: Resource }[]).filter(
        (e) => e.resource.meta?.project === t.testProject.projectId,
      );
      // The audit trail (AuditEvent) grew by the requests since the export: it holds at least as many now.
      if (type === 'AuditEvent') expect(list.length).toBeLessThanOrEqual(own.length);
      else expect(list.length, type).toBe(own.length);
      expect(list.every((r) => r.meta?.project === t.testProject.projectId)).toBe(true);
    }
  });

  it('_type and _since narrow the output', async () => {
    const typed = await download(await exportOf('/fhir/R4/$export?_type=Patient,Organization'));
    expect([...typed.keys()].sort()).toEqual(['Organization', 'Patient']);
    const since = new Date(Date.parse(bobObs.meta.lastUpdated) + 1).toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const changed = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Patient/${carol.id}`,
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: { resourceType: 'Patient', id: carol.id, name: [{ family: 'Carol', given: ['C'] }] },
    });
    expect(changed.statusCode).toBe(200);
    const recent = await download(
      await exportOf(`/fhir/R4/$export?_type=Patient,Observation&_since=${encodeURIComponent(since)}`),
    );
    expect([...recent.keys()]).toEqual(['Patient']);
    expect(idsOf(recent.get('Patient'))).toEqual([carol.id]);
  });

  it('_typeFilter exports the union of its queries for a type, other types whole', async () => {
    const filter = encodeURIComponent('Observation?status=final,Observation?_id=' + aliceObs[1].id);
    const byType = await download(await exportOf(`/fhir/R4/$export?_type=Observation,Patient&_typeFilter=${filter}`));
    const finals = [...aliceObs.filter((o) => (o as { status?: string }).status === 'final'), bobObs];
    expect(idsOf(byType.get('Observation'))).toEqual([...finals, aliceObs[1]].map((o) => o.id).sort());
    expect(idsOf(byType.get('Patient'))).toEqual(expect.arrayContaining([alice.id, bob.id, carol.id]));
  });

  it('Patient level: the compartments of every patient, nothing outside them', async () => {
    const byType = await download(await exportOf('/fhir/R4/Patient/$export?_outputFormat=application/fhir%2Bndjson'));
    expect(byType.has('Organization')).toBe(false);
    // Group is in the Patient compartment (R4 CompartmentDefinition: Group.member).
    expect(idsOf(byType.get('Group'))).toEqual([group.id]);
    expect(idsOf(byType.get('Observation'))).toEqual([...aliceObs.map((o) => o.id), bobObs.id].sort());
    expect(idsOf(byType.get('Patient'))).toEqual(expect.arrayContaining([alice.id, bob.id, carol.id]));
  });

  it("Group level: only the members' compartments", async () => {
    const manifest = await exportOf(`/fhir/R4/Group/${group.id}/$export?_outputFormat=ndjson`);
    expect(manifest.error).toEqual([]);
    const byType = await download(manifest);
    expect(idsOf(byType.get('Patient'))).toEqual([alice.id, carol.id].sort());
    expect(idsOf(byType.get('Observation'))).toEqual(aliceObs.map((o) => o.id).sort());
  });

  it("runs with the requester's access policy", async () => {
    const policy = await post({
      resourceType: 'AccessPolicy',
      resource: [
        { resourceType: 'Patient' },
        { resourceType: 'Observation', criteria: 'Observation?status=final' },
        { resourceType: 'AsyncJob' },
        { resourceType: 'Binary' },
      ],
    } as Resource);
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    const byType = await download(await exportOf('/fhir/R4/$export', m.headers), m.headers);
    expect([...byType.keys()].sort()).toEqual(['Observation', 'Patient']);
    const finals = [...aliceObs.filter((o) => (o as { status?: string }).status === 'final'), bobObs];
    expect(idsOf(byType.get('Observation'))).toEqual(finals.map((o) => o.id).sort());
  });

  it('runs for a backend service (client credentials), as the client application', async () => {
    const { client } = t.testProject;
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${client.id}&client_secret=${client.secret}`,
    });
    expect(token.statusCode, token.body).toBe(200);
    const headers = { authorization: `Bearer ${token.json().access_token}` };
    const byType = await download(await exportOf(`/fhir/R4/Group/${group.id}/$export?_type=Patient`, headers), headers);
    expect(idsOf(byType.get('Patient'))).toEqual([alice.id, carol.id].sort());
  });

  it('DELETE on the status URL cancels: the status is then 404 and no output is kept', async () => {
    const binaries = async () =>
      (await t.app.inject({ url: '/fhir/R4/Binary?_summary=count', headers: t.authHeaders })).json().total as number;
    const before = await binaries();
    const kick = await kickOff('/fhir/R4/$export');
    expect(kick.statusCode).toBe(202);
    const location = path(kick.headers['content-location'] as string);
    const cancel = await t.app.inject({ method: 'DELETE', url: location, headers: t.authHeaders });
    expect(cancel.statusCode).toBe(202);
    const after = await t.app.inject({ url: location, headers: t.authHeaders });
    expect(after.statusCode).toBe(404);
    expect(after.json().resourceType).toBe('OperationOutcome');
    // Whatever the job wrote before it saw the cancellation is removed.
    await waitFor(async () => ((await binaries()) === before ? true : undefined), 30000);
  });

  it('keeps projects apart: another project sees nothing of this one', async () => {
    const manifest = await exportOf('/fhir/R4/$export?_type=Patient');
    const kick = await kickOff('/fhir/R4/$export?_type=Patient');
    const location = path(kick.headers['content-location'] as string);
    const other = await createTestProject(t.app, t.services, 'Other');
    // Their token cannot poll our status URL nor read our files.
    expect((await t.app.inject({ url: location, headers: other.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: location, headers: other.headers })).statusCode).toBe(404);
    for (const out of manifest.output) {
      const res = await t.app.inject({ url: path(out.url), headers: other.headers });
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain(alice.id);
    }
    // Their own export holds none of our resources.
    const theirs = await download(await exportOf('/fhir/R4/$export', other.headers), other.headers);
    const text = JSON.stringify([...theirs.values()]);
    for (const id of [alice.id, bob.id, carol.id, org.id, group.id, bobObs.id]) expect(text).not.toContain(id);
    expect((await kickOff(`/fhir/R4/Group/${group.id}/$export`, other.headers)).statusCode).toBe(404);
  });
});

describe("$export: the manifest's error files (OperationOutcomes of what was not exported)", () => {
  it('names the _type types the SMART scopes do not let the requester search; none left is a 403', async () => {
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      scope: 'openid user/Patient.rs user/Binary.cruds user/AsyncJob.cruds',
    });
    const manifest = await exportOf('/fhir/R4/$export?_type=Patient,Observation,Organization', m.headers);
    expect([...(await download(manifest, m.headers)).keys()]).toEqual(['Patient']);
    expect(manifest.error.map((e) => e.count)).toEqual([2]);
    // Read with the requester's own token, as the data files are.
    const outcomes = await errorsOf(manifest, m.headers);
    expect(issuesOf(outcomes)).toEqual([
      'error forbidden: Observation is not exported: not allowed to search Observation',
      'error forbidden: Organization is not exported: not allowed to search Organization',
    ]);
    expect(outcomes[0].issue[0].expression).toEqual(['_type']);
    const none = await kickOff('/fhir/R4/$export?_type=Observation', m.headers);
    expect(none.statusCode).toBe(403);
  });

  it('Group level: members that are not Patients, unknown or deleted; inactive and repeated ones are no problem', async () => {
    const dave = await post({ resourceType: 'Patient', name: [{ family: 'Dave' }] });
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/fhir/R4/Patient/${dave.id}`,
      headers: t.authHeaders,
    });
    expect(deleted.statusCode).toBeLessThan(300);
    // More members than one search parameter takes values: checked and exported in chunks.
    const missing = Array.from({ length: 110 }, (_, i) => `Patient/missing-${i}`);
    const crowd = await post({
      resourceType: 'Group',
      type: 'person',
      actual: true,
      member: [
        { entity: { reference: `Patient/${alice.id}` } },
        { entity: { reference: 'Practitioner/someone' } },
        { entity: { display: 'A visitor' } },
        { entity: { reference: `Patient/${dave.id}` } },
        { entity: { reference: 'Patient/left-long-ago' }, inactive: true },
        ...missing.map((reference) => ({ entity: { reference } })),
        { entity: { reference: `Patient/${carol.id}/_history/1` } },
        { entity: { reference: `Patient/${alice.id}` } },
      ],
    } as Resource);
    const manifest = await exportOf(`/fhir/R4/Group/${crowd.id}/$export?_type=Patient,Observation`);
    const byType = await download(manifest);
    expect(idsOf(byType.get('Patient'))).toEqual([alice.id, carol.id].sort());
    expect(idsOf(byType.get('Observation'))).toEqual(aliceObs.map((o) => o.id).sort());
    expect(manifest.error.map((e) => e.count)).toEqual([3 + missing.length]);
    const outcomes = await errorsOf(manifest);
    const notReadable = (reference: string) =>
      `error not-found: Group member ${reference} is not exported: no such Patient, deleted, or not readable`;
    expect(issuesOf(outcomes)).toEqual([
      'warning not-supported: Group member 2 is not exported: its entity has the reference Practitioner/someone, not a Patient reference',
      'warning not-supported: Group member 3 is not exported: its entity has no literal reference, not a Patient reference',
      notReadable(`Patient/${dave.id}`),
      ...missing.map(notReadable),
    ]);
    expect(outcomes.slice(0, 3).map((o) => o.issue[0].expression)).toEqual([
      ['Group.member[1].entity'],
      ['Group.member[2].entity'],
      ['Group.member[3].entity'],
    ]);
  });

  it('Group level: a member the access policy hides is reported as an unknown one would be', async () => {
    const policy = await post({
      resourceType: 'AccessPolicy',
      resource: [
        { resourceType: 'Patient', criteria: 'Patient?name=Alice' },
        { resourceType: 'Group' },
        { resourceType: 'AsyncJob' },
        { resourceType: 'Binary' },
      ],
    } as Resource);
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    const manifest = await exportOf(`/fhir/R4/Group/${group.id}/$export?_type=Patient`, m.headers);
    expect(idsOf((await download(manifest, m.headers)).get('Patient'))).toEqual([alice.id]);
    const outcomes = await errorsOf(manifest, m.headers);
    expect(issuesOf(outcomes)).toEqual([
      `error not-found: Group member Patient/${carol.id} is not exported: no such Patient, deleted, or not readable`,
    ]);
    expect(JSON.stringify(outcomes)).not.toContain('Carol');
  });

  it('keeps the issues a search answers beside its results (a _typeFilter on a parameter being reindexed)', async () => {
    const client = await t.pool.connect();
    try {
      // The reindex that a new SearchParameter queues waits for these rows: it is still due during the export.
      await client.query('BEGIN');
      await client.query(`SELECT id FROM ${resourceTable('Organization')} WHERE project_id = $1 FOR UPDATE`, [
        t.testProject.projectId,
      ]);
      await post({
        resourceType: 'SearchParameter',
        url: 'http://example.org/fhir/SearchParameter/Organization-nickname',
        name: 'nickname',
        status: 'active',
        description: 'Another name of the organization',
        code: 'nickname',
        base: ['Organization'],
        type: 'string',
        expression: 'Organization.alias',
      } as Resource);
      const filter = encodeURIComponent('Organization?nickname=Clinic');
      const manifest = await exportOf(`/fhir/R4/$export?_type=Organization,Patient&_typeFilter=${filter}`);
      expect(manifest.output.map((o) => o.type)).toContain('Patient');
      expect(manifest.error.map((e) => e.count)).toEqual([1]);
      expect(issuesOf(await errorsOf(manifest))).toEqual([
        expect.stringMatching(
          /^information informational: Searching Organization: Organization resources are being reindexed .*"nickname" may be incomplete/,
        ),
      ]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('a cancelled export keeps no error file either', async () => {
    const since = new Date().toISOString();
    const crowd = await post({
      resourceType: 'Group',
      type: 'person',
      actual: true,
      member: [{ entity: { reference: `Patient/${alice.id}` } }, { entity: { reference: 'Patient/no-such-patient' } }],
    } as Resource);
    const client = await t.pool.connect();
    let location: string;
    try {
      // New Binaries wait for this lock: the job is held at its first file while the client cancels.
      await client.query('BEGIN');
      await client.query(`LOCK TABLE ${resourceTable('Binary')} IN SHARE ROW EXCLUSIVE MODE`);
      const kick = await kickOff(`/fhir/R4/Group/${crowd.id}/$export?_type=Patient`);
      expect(kick.statusCode).toBe(202);
      location = path(kick.headers['content-location'] as string);
      // Until the job waits to write a Binary.
      await waitFor(async () => {
        const waiting = await t.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
          [`%${resourceTable('Binary')}%`],
        );
        return waiting.rows[0].n > 0 ? true : undefined;
      }, 30000);
      expect((await t.app.inject({ method: 'DELETE', url: location, headers: t.authHeaders })).statusCode).toBe(202);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    // The job goes on to write its Patient file and its error file, sees the cancellation, and deletes both.
    const binaryHistory = async () => {
      const res = await t.app.inject({
        url: `/fhir/R4/_history?_since=${encodeURIComponent(since)}`,
        headers: t.authHeaders,
      });
      const entries = (res.json() as { entry?: { request?: { method?: string; url?: string } }[] }).entry ?? [];
      return entries.filter((e) => e.request?.url?.startsWith('Binary')).map((e) => e.request?.method);
    };
    const methods = await waitFor(async () => {
      const list = await binaryHistory();
      return list.filter((m) => m === 'DELETE').length === 2 ? list.sort() : undefined;
    }, 30000);
    expect(methods).toEqual(['DELETE', 'DELETE', 'POST', 'POST']);
    expect((await t.app.inject({ url: location, headers: t.authHeaders })).statusCode).toBe(404);
  });
});
