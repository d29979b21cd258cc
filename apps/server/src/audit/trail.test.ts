/** The access audit trail end to end: every interaction kind's entry, search, isolation, settings. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, createTestProject, type TestProject } from '../test/auth.js';
import { EXT_REQUEST_ID } from './audit-event.js';
import { storedEvent } from './stored-entry.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
let seq = 0;

interface Event extends Resource {
  action: string;
  outcome: string;
  outcomeDesc: string;
  recorded: string;
  subtype: { code: string }[];
  extension: { url: string; valueString?: string; valueInteger?: number }[];
  agent: {
    who: { reference?: string };
    altId?: string;
    network?: { address: string };
    extension?: { valueString: string }[];
  }[];
  entity?: {
    what?: { reference?: string; display?: string };
    query?: string;
    detail?: { type: string; valueString: string }[];
  }[];
  source: { site: string };
}

/** A request with an id of its own and a user agent; answers the response and that id. */
async function call(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = t.authHeaders,
  contentType = FHIR,
) {
  const requestId = `audit-test-${++seq}-${Date.now()}`;
  const res = await t.app.inject({
    method,
    url,
    headers: {
      ...headers,
      'x-request-id': requestId,
      'user-agent': 'trail-test/1.0',
      'x-forwarded-for': '198.51.100.7',
      ...(payload !== undefined ? { 'content-type': contentType } : {}),
    },
    ...(payload !== undefined ? { payload: payload as string } : {}),
  });
  return { res, requestId };
}

/** The entries a request left, once written. */
async function entriesOf(requestId: string): Promise<Event[]> {
  await t.services.audit.writer.flush();
  const rows = await t.pool.query<{ project_id: string; content: string }>(
    `SELECT project_id, content FROM audit_event WHERE content LIKE $1 ORDER BY seq`,
    [`%"requestId":"${requestId}"%`],
  );
  return rows.rows.map((r) => storedEvent(r.project_id, r.content) as unknown as Event);
}

const ids = (body: { entry?: { resource: Event }[] }) => (body.entry ?? []).map((e) => e.resource);

const patientsOf = (e: Event) =>
  (e.entity ?? []).map((x) => x.what?.reference).filter((r): r is string => !!r?.startsWith('Patient/'));

async function create(resource: Resource): Promise<Resource & { id: string }> {
  const { res } = await call('POST', `/fhir/R4/${resource.resourceType}`, resource);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

let patient: Resource & { id: string };
let observation: Resource & { id: string };

beforeAll(async () => {
  t = await createTestApp();
  patient = await create({ resourceType: 'Patient', name: [{ family: 'Trail' }] } as Resource);
  observation = await create({
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'weight' },
    subject: { reference: `Patient/${patient.id}` },
  } as Resource);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('entries of each interaction', () => {
  it('create: who, membership, project, resource, patient, address, user agent, request id, outcome', async () => {
    const { res, requestId } = await call('POST', '/fhir/R4/Patient', { resourceType: 'Patient' });
    expect(res.statusCode).toBe(201);
    const [entry, ...more] = await entriesOf(requestId);
    expect(more).toEqual([]);
    const id = res.json().id;
    expect(entry.action).toBe('C');
    expect(entry.subtype[0].code).toBe('create');
    expect(entry.outcome).toBe('0');
    expect(entry.outcomeDesc).toBe('201');
    expect(entry.source.site).toBe(t.testProject.projectId);
    expect(entry.agent[0].who.reference).toBe(`Practitioner/${t.testProject.profile.id}`);
    expect(entry.agent[0].altId).toBe(`User/${t.testProject.user.id}`);
    expect(entry.agent[0].network?.address).toBe('198.51.100.7');
    expect(entry.agent[0].extension?.[0].valueString).toBe('trail-test/1.0');
    expect(entry.agent.map((a) => a.who.reference)).toContain(`ProjectMembership/${t.testProject.membership.id}`);
    expect(entry.extension.find((e) => e.url === EXT_REQUEST_ID)?.valueString).toBe(requestId);
    expect(entry.entity?.[0].what?.reference).toBe(`Patient/${id}`);
  });

  it('read and vread of a compartment resource name its patient', async () => {
    const read = await call('GET', `/fhir/R4/Observation/${observation.id}`);
    expect(read.res.statusCode).toBe(200);
    const [r] = await entriesOf(read.requestId);
    expect(r.action).toBe('R');
    expect(r.subtype[0].code).toBe('read');
    expect(r.entity?.[0].what?.reference).toBe(`Observation/${observation.id}`);
    expect(patientsOf(r)).toEqual([`Patient/${patient.id}`]);
    const vread = await call('GET', `/fhir/R4/Patient/${patient.id}/_history/1`);
    const [v] = await entriesOf(vread.requestId);
    expect(v.subtype[0].code).toBe('vread');
    expect(v.entity?.[0].what?.reference).toBe(`Patient/${patient.id}`);
  });

  it('search: the query, the count returned and the patients in the results', async () => {
    const { res, requestId } = await call('GET', `/fhir/R4/Observation?subject=Patient/${patient.id}`);
    expect(res.statusCode).toBe(200);
    const [s] = await entriesOf(requestId);
    expect(s.subtype[0].code).toBe('search-type');
    const query = s.entity?.find((e) => e.query);
    expect(Buffer.from(query?.query as string, 'base64').toString()).toBe(`subject=Patient/${patient.id}`);
    expect(query?.detail?.[0]).toEqual({ type: 'count', valueString: '1' });
    expect(patientsOf(s)).toEqual([`Patient/${patient.id}`]);
  });

  it('history, a failed read (outcome 4 and its status), a compartment search', async () => {
    const history = await call('GET', `/fhir/R4/Patient/${patient.id}/_history`);
    expect((await entriesOf(history.requestId))[0].subtype[0].code).toBe('history-instance');
    const missing = await call('GET', '/fhir/R4/Patient/does-not-exist');
    expect(missing.res.statusCode).toBe(404);
    const [m] = await entriesOf(missing.requestId);
    expect([m.outcome, m.outcomeDesc]).toEqual(['4', '404']);
    const compartment = await call('GET', `/fhir/R4/Patient/${patient.id}/Observation`);
    const [c] = await entriesOf(compartment.requestId);
    expect(c.subtype[0].code).toBe('search-compartment');
    expect(patientsOf(c)).toContain(`Patient/${patient.id}`);
  });

  it('update, patch and delete: one entry each with the action and patient', async () => {
    const update = await call('PUT', `/fhir/R4/Observation/${observation.id}`, { ...observation, status: 'amended' });
    expect(update.res.statusCode).toBe(200);
    const [u] = await entriesOf(update.requestId);
    expect([u.action, u.subtype[0].code]).toEqual(['U', 'update']);
    expect(patientsOf(u)).toEqual([`Patient/${patient.id}`]);
    const patch = await call(
      'PATCH',
      `/fhir/R4/Observation/${observation.id}`,
      JSON.stringify([{ op: 'replace', path: '/status', value: 'final' }]),
      t.authHeaders,
      'application/json-patch+json',
    );
    expect(patch.res.statusCode, patch.res.body).toBe(200);
    const [p] = await entriesOf(patch.requestId);
    expect([p.action, p.subtype[0].code]).toEqual(['U', 'patch']);
    const victim = await create({ resourceType: 'Observation', status: 'final', code: { text: 'x' } } as Resource);
    const del = await call('DELETE', `/fhir/R4/Observation/${victim.id}`);
    expect(del.res.statusCode).toBe(204);
    const [d] = await entriesOf(del.requestId);
    expect([d.action, d.subtype[0].code]).toEqual(['D', 'delete']);
    expect(d.entity?.[0].what?.reference).toBe(`Observation/${victim.id}`);
  });

  it('a refused write is recorded with its failure', async () => {
    const { res, requestId } = await call('POST', '/fhir/R4/Observation', { resourceType: 'Observation' });
    expect(res.statusCode).toBe(400);
    const [e] = await entriesOf(requestId);
    expect([e.action, e.outcome, e.outcomeDesc]).toEqual(['C', '4', '400']);
  });

  it('batch and transaction: an entry per Bundle entry', async () => {
    const batch = await call('POST', '/fhir/R4', {
      resourceType: 'Bundle',
      type: 'batch',
      entry: [
        { request: { method: 'GET', url: `Patient/${patient.id}` } },
        { request: { method: 'GET', url: `Observation?subject=Patient/${patient.id}` } },
        { request: { method: 'POST', url: 'Observation' }, resource: { resourceType: 'Observation' } },
        { request: { method: 'POST', url: 'Patient' }, resource: { resourceType: 'Patient' } },
      ],
    });
    expect(batch.res.statusCode).toBe(200);
    const entries = await entriesOf(batch.requestId);
    const kinds = entries.map((e) => `${e.subtype[0].code}:${e.outcome}`).sort();
    expect(kinds).toEqual(['create:0', 'create:4', 'read:0', 'search-type:0']);
    const tx = await call('POST', '/fhir/R4', {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        { request: { method: 'POST', url: 'Patient' }, resource: { resourceType: 'Patient' } },
        { request: { method: 'POST', url: 'Patient' }, resource: { resourceType: 'Patient' } },
      ],
    });
    expect(tx.res.statusCode).toBe(200);
    expect((await entriesOf(tx.requestId)).map((e) => e.action)).toEqual(['C', 'C']);
  });

  it('operations: $everything, $graphql and $export', async () => {
    const everything = await call('GET', `/fhir/R4/Patient/${patient.id}/$everything`);
    expect(everything.res.statusCode).toBe(200);
    const [e] = await entriesOf(everything.requestId);
    expect([e.subtype[0].code, e.action]).toEqual(['everything', 'R']);
    expect(patientsOf(e)).toEqual([`Patient/${patient.id}`]);
    expect(e.entity?.[0].what?.reference).toBe(`Patient/${patient.id}`);
    const graphql = await call(
      'POST',
      '/fhir/R4/$graphql',
      { query: `{ Patient(id: "${patient.id}") { id } }` },
      t.authHeaders,
      'application/json',
    );
    expect(graphql.res.statusCode, graphql.res.body).toBe(200);
    const [g] = await entriesOf(graphql.requestId);
    expect(g.subtype[0].code).toBe('graphql');
    const exported = await call('GET', '/fhir/R4/Patient/$export', undefined, {
      ...t.authHeaders,
      prefer: 'respond-async',
    });
    expect(exported.res.statusCode).toBe(202);
    // The kick-off, and the AsyncJob it wrote.
    const kinds = (await entriesOf(exported.requestId)).map((x) => `${x.subtype[0].code}:${x.outcomeDesc}`);
    expect(kinds.sort()).toEqual(['create:201', 'export:202']);
  });

  it('Binary: create and read', async () => {
    const created = await call('POST', '/fhir/R4/Binary', 'hello', t.authHeaders, 'text/plain');
    expect(created.res.statusCode).toBe(201);
    const id = created.res.json().id;
    const [c] = await entriesOf(created.requestId);
    expect([c.action, c.entity?.[0].what?.reference]).toEqual(['C', `Binary/${id}`]);
    const read = await call('GET', `/fhir/R4/Binary/${id}`, undefined, { ...t.authHeaders, accept: 'text/plain' });
    expect(read.res.statusCode).toBe(200);
    const [r] = await entriesOf(read.requestId);
    expect([r.action, r.entity?.[0].what?.reference]).toEqual(['R', `Binary/${id}`]);
  });
});

describe('AuditEvent search on the trail', () => {
  const search = async (query: string, headers = t.authHeaders) => {
    const res = await t.app.inject({ url: `/fhir/R4/AuditEvent?${query}`, headers });
    return res;
  };

  it('by patient, agent, entity, action, outcome and date, newest first, paged', async () => {
    const byPatient = ids((await search(`patient=${patient.id}&_count=1000`)).json());
    expect(byPatient.length).toBeGreaterThan(5);
    expect(
      byPatient.every(
        (e) =>
          patientsOf(e).includes(`Patient/${patient.id}`) || e.entity?.[0].what?.reference === `Patient/${patient.id}`,
      ),
    ).toBe(true);
    const recorded = byPatient.map((e) => e.recorded);
    expect([...recorded].sort().reverse()).toEqual(recorded);
    // _lastUpdated sorts as date does (an entry is written once, when recorded), as SDK clients ask.
    // (Each search is itself recorded, naming the patient: later searches see more entries.)
    const oldestFirst = ids((await search(`patient=${patient.id}&_count=1000&_sort=_lastUpdated`)).json());
    const ascending = oldestFirst.map((e) => e.recorded);
    expect(ascending.length).toBeGreaterThan(recorded.length);
    expect([...ascending].sort()).toEqual(ascending);
    const newestFirst = ids((await search(`patient=${patient.id}&_count=1000&_sort=-_lastUpdated`)).json());
    const descending = newestFirst.map((e) => e.recorded);
    expect([...descending].sort().reverse()).toEqual(descending);
    const byAgent = ids((await search(`agent=ProjectMembership/${t.testProject.membership.id}&action=D`)).json());
    expect(byAgent.length).toBe(1);
    const failures = ids((await search('outcome=4&_count=100')).json());
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures.every((e) => e.outcome === '4')).toBe(true);
    const byEntity = ids((await search(`entity=Observation/${observation.id}`)).json());
    expect(byEntity.map((e) => e.subtype[0].code)).toEqual(
      expect.arrayContaining(['read', 'update', 'patch', 'create']),
    );
    const future = ids((await search('date=ge2999-01-01')).json());
    expect(future).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect(ids((await search(`date=${today}&_count=5`)).json()).length).toBe(5);
    const first = (await search('_count=2')).json();
    const next = first.link.find((l: { relation: string }) => l.relation === 'next').url as string;
    const second = (
      await t.app.inject({ url: new URL(next).pathname + new URL(next).search, headers: t.authHeaders })
    ).json();
    expect(second.entry.length).toBe(2);
    expect(second.entry[0].resource.id).not.toBe(first.entry[1].resource.id);
    expect(second.entry[0].resource.recorded <= first.entry[1].resource.recorded).toBe(true);
  });

  it('reads an entry by id, for its project admin only', async () => {
    const [entry] = ids((await search('_count=1')).json());
    const read = await t.app.inject({ url: `/fhir/R4/AuditEvent/${entry.id}`, headers: t.authHeaders });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(entry);
    const other = await createTestProject(t.app, t.services, 'Reader elsewhere');
    const elsewhere = await t.app.inject({ url: `/fhir/R4/AuditEvent/${entry.id}`, headers: other.headers });
    expect(elsewhere.statusCode).toBe(404);
  });

  it('answers 400 for an unknown parameter or a bad value', async () => {
    expect((await search('name=x')).statusCode).toBe(400);
    expect((await search('date=yesterday')).statusCode).toBe(400);
    expect((await search('action=X')).statusCode).toBe(400);
    expect((await search('_cursor=nonsense')).statusCode).toBe(400);
    expect((await search('_sort=action')).statusCode).toBe(400);
  });

  it('sign-ins stored as AuditEvents are in the trail too', async () => {
    const signIns = ids((await search('type=110114&_count=100')).json());
    expect(signIns.length).toBeGreaterThan(0);
  });
});

describe('$export', () => {
  it("a project admin's system export carries the trail as AuditEvent NDJSON", async () => {
    const marker = await call('GET', `/fhir/R4/Patient/${patient.id}`);
    const kick = await call('GET', '/fhir/R4/$export?_type=AuditEvent', undefined, {
      ...t.authHeaders,
      prefer: 'respond-async',
    });
    expect(kick.res.statusCode, kick.res.body).toBe(202);
    const status = new URL(kick.res.headers['content-location'] as string).pathname;
    let manifest: { output: { type: string; url: string; count: number }[] } | undefined;
    for (let i = 0; i < 300 && !manifest; i++) {
      const poll = await t.app.inject({ url: status, headers: t.authHeaders });
      if (poll.statusCode === 200) manifest = poll.json();
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(manifest?.output.length).toBeGreaterThan(0);
    const lines: Event[] = [];
    for (const out of manifest?.output ?? []) {
      expect(out.type).toBe('AuditEvent');
      const file = await t.app.inject({
        url: new URL(out.url).pathname,
        headers: { ...t.authHeaders, accept: 'application/fhir+ndjson' },
      });
      lines.push(
        ...file.body
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Event),
      );
    }
    const found = lines.find((e) => e.extension?.some((x) => x.valueString === marker.requestId));
    expect(found?.entity?.[0].what?.reference).toBe(`Patient/${patient.id}`);
    expect(
      lines.every((e) => e.source?.site === t.testProject.projectId || e.meta?.project === t.testProject.projectId),
    ).toBe(true);
  }, 60_000);
});

describe('isolation', () => {
  let other: TestProject;
  beforeAll(async () => {
    other = await createTestProject(t.app, t.services, 'Other Project');
    await call('POST', '/fhir/R4/Patient', { resourceType: 'Patient' }, other.headers);
  });

  it("an admin of one project never sees another project's entries", async () => {
    await t.services.audit.writer.flush();
    const mine = (await t.app.inject({ url: `/fhir/R4/AuditEvent?_count=1000`, headers: other.headers })).json();
    expect(mine.entry.length).toBeGreaterThan(0);
    expect(mine.entry.every((e: { resource: Event }) => e.resource.source?.site !== t.testProject.projectId)).toBe(
      true,
    );
    const theirs = (
      await t.app.inject({ url: `/fhir/R4/AuditEvent?patient=${patient.id}`, headers: other.headers })
    ).json();
    expect(theirs.entry ?? []).toEqual([]);
    const verify = await t.app.inject({
      url: `/fhir/R4/Project/${t.testProject.projectId}/$verify-audit`,
      headers: other.headers,
    });
    expect(verify.statusCode).toBe(403);
  });

  it('a member who is not an admin does not read the trail', async () => {
    const member = await addTestMember(t.app, t.services, t.testProject.projectId);
    const res = await t.app.inject({ url: `/fhir/R4/AuditEvent?patient=${patient.id}`, headers: member.headers });
    // The stored AuditEvent resources, as before: none is about this patient.
    expect(res.statusCode).toBe(200);
    expect(res.json().entry ?? []).toEqual([]);
  });

  it('a patient sees who accessed their own record, and nothing else', async () => {
    const me = await addTestMember(t.app, t.services, t.testProject.projectId, { profile: patient });
    const res = await t.app.inject({ url: `/fhir/R4/AuditEvent?_count=1000`, headers: me.headers });
    expect(res.statusCode).toBe(200);
    const events = ids(res.json());
    expect(events.length).toBeGreaterThan(3);
    for (const e of events) {
      const patients = patientsOf(e);
      expect(patients.every((p) => p === `Patient/${patient.id}`)).toBe(true);
      expect(e.agent[0].network).toBeUndefined();
    }
    const sneaky = ids(
      (await t.app.inject({ url: `/fhir/R4/AuditEvent?patient=someone-else`, headers: me.headers })).json(),
    );
    expect(sneaky).toEqual([]);
  });
});

describe('settings', () => {
  const setMode = async (mode: string | undefined) => {
    const repo = t.services.systemRepo(t.testProject.projectId);
    const project = (await repo.readResource('Project', t.testProject.projectId)).resource as Resource & {
      setting?: { name: string; valueString?: string }[];
    };
    const setting = (project.setting ?? []).filter((s) => s.name !== 'auditMode');
    const next = mode ? [...setting, { name: 'auditMode', valueString: mode }] : setting;
    return repo.updateResource({ ...project, setting: next.length ? next : undefined } as Resource);
  };
  afterAll(async () => {
    await setMode(undefined);
  });

  it('off records nothing; summary one entry without patients; an unknown mode is a 400', async () => {
    await setMode('off');
    const off = await call('GET', `/fhir/R4/Observation?subject=Patient/${patient.id}`);
    expect(await entriesOf(off.requestId)).toEqual([]);
    await setMode('summary');
    const summary = await call('GET', `/fhir/R4/Observation?subject=Patient/${patient.id}`);
    const [s, ...more] = await entriesOf(summary.requestId);
    expect(more).toEqual([]);
    expect(s.subtype[0].code).toBe('search-type');
    expect(patientsOf(s)).toEqual([]);
    await expect(setMode('everything')).rejects.toThrow(/auditMode/);
  });

  it('by default a project without patients is summarised, and recorded in full once it holds one', async () => {
    const fresh = await createTestProject(t.app, t.services, 'Fresh');
    const before = await call('GET', '/fhir/R4/Observation', undefined, fresh.headers);
    expect(await entriesOf(before.requestId)).toHaveLength(1);
    const p = await call('POST', '/fhir/R4/Patient', { resourceType: 'Patient' }, fresh.headers);
    const pid = p.res.json().id;
    expect(await t.services.audit.holders.holdsPatients(fresh.projectId)).toBe(true);
    const read = await call('GET', `/fhir/R4/Patient?_id=${pid}`, undefined, fresh.headers);
    expect(patientsOf((await entriesOf(read.requestId))[0])).toEqual([`Patient/${pid}`]);
  });
});
