/** Each access policy feature, enforced in SQL on reads, searches, includes, history and writes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../../test/app.js';
import { addTestMember, type TestMember } from '../../test/auth.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
const admin = () => t.authHeaders;

async function post(resource: Resource, headers = admin()): Promise<Resource & { id: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType}`,
    headers: { ...headers, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 201) {
    throw new Error(`${res.statusCode} ${res.body}`);
  }
  return res.json();
}

async function policy(body: Omit<Resource, 'resourceType'>): Promise<string> {
  return (await post({ resourceType: 'AccessPolicy', ...body })).id;
}

async function member(
  policyId: string | undefined,
  extra: Parameters<typeof addTestMember>[3] = {},
): Promise<TestMember> {
  return addTestMember(t.app, t.services, t.testProject.projectId, {
    ...extra,
    membership: {
      ...(policyId ? { accessPolicy: { reference: `AccessPolicy/${policyId}` } } : {}),
      ...extra.membership,
    },
  });
}

const get = (m: TestMember, url: string) => t.app.inject({ url: `/fhir/R4/${url}`, headers: m.headers });
const ids = (res: { json: () => { entry?: { resource: Resource }[] } }) =>
  (res.json().entry ?? []).map((e) => e.resource.id);

let alice: Resource & { id: string };
let bob: Resource & { id: string };
let aliceObsFinal: Resource & { id: string };
let aliceObsPrelim: Resource & { id: string };
let bobObs: Resource & { id: string };

beforeAll(async () => {
  t = await createTestApp();
  alice = await post({
    resourceType: 'Patient',
    name: [{ family: 'Alice' }],
    birthDate: '1970-01-01',
    identifier: [{ system: 'urn:mrn', value: 'A1' }],
  });
  bob = await post({ resourceType: 'Patient', name: [{ family: 'Bob' }], birthDate: '1980-01-01' });
  aliceObsFinal = await post({
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'hr' },
    subject: { reference: `Patient/${alice.id}` },
  });
  aliceObsPrelim = await post({
    resourceType: 'Observation',
    status: 'preliminary',
    code: { text: 'hr' },
    subject: { reference: `Patient/${alice.id}` },
  });
  bobObs = await post({
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'hr' },
    subject: { reference: `Patient/${bob.id}` },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('resource type rules', () => {
  it('allows only the listed types; others are 403 or empty', async () => {
    const m = await member(await policy({ resource: [{ resourceType: 'Patient' }] }));
    expect((await get(m, 'Patient')).statusCode).toBe(200);
    expect((await get(m, `Observation/${aliceObsFinal.id}`)).statusCode).toBe(403);
    expect((await get(m, 'Observation')).statusCode).toBe(403);
    // _include of a type outside the policy brings nothing.
    const inc = await get(m, 'Patient?_revinclude=Observation:subject');
    expect(ids(inc).sort()).toEqual([alice.id, bob.id].sort());
    // System search and history leave the other types out.
    const system = await get(m, '_history?_count=1000');
    expect(system.statusCode).toBe(200);
    expect(system.body).not.toContain(aliceObsFinal.id);
  });

  it('readonly: reads and searches, never writes', async () => {
    const m = await member(await policy({ resource: [{ resourceType: 'Patient', readonly: true }] }));
    expect((await get(m, `Patient/${alice.id}`)).statusCode).toBe(200);
    const create = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { resourceType: 'Patient' },
    });
    expect(create.statusCode).toBe(403);
    const update = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Patient/${alice.id}`,
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { ...alice, active: true },
    });
    expect(update.statusCode).toBe(403);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/fhir/R4/Patient/${alice.id}`, headers: m.headers })).statusCode,
    ).toBe(403);
  });

  it('interaction lists narrow further (read without search)', async () => {
    const m = await member(await policy({ resource: [{ resourceType: 'Patient', interaction: ['read'] }] }));
    expect((await get(m, `Patient/${alice.id}`)).statusCode).toBe(200);
    expect((await get(m, 'Patient')).statusCode).toBe(403);
    expect((await get(m, `Patient/${alice.id}/_history`)).statusCode).toBe(403);
  });
});

describe('criteria', () => {
  it('shows only matching rows, in reads, searches, includes and history; writes must match before and after', async () => {
    const m = await member(
      await policy({
        resource: [{ resourceType: 'Observation', criteria: 'Observation?status=final' }, { resourceType: 'Patient' }],
      }),
    );
    expect((await get(m, `Observation/${aliceObsFinal.id}`)).statusCode).toBe(200);
    expect((await get(m, `Observation/${aliceObsPrelim.id}`)).statusCode).toBe(404);
    expect((await get(m, `Observation/${aliceObsPrelim.id}/_history/1`)).statusCode).toBe(404);
    expect(ids(await get(m, 'Observation')).sort()).toEqual([aliceObsFinal.id, bobObs.id].sort());
    expect(ids(await get(m, `Patient?_id=${alice.id}&_revinclude=Observation:subject`)).sort()).toEqual(
      [alice.id, aliceObsFinal.id].sort(),
    );
    expect((await get(m, 'Observation/_history')).body).not.toContain(aliceObsPrelim.id);
    expect(ids(await get(m, `Patient?_has:Observation:subject:status=preliminary`))).toEqual([]);

    const bad = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Observation',
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { resourceType: 'Observation', status: 'preliminary', code: { text: 'x' } },
    });
    expect(bad.statusCode).toBe(403);
    const good = await post({ resourceType: 'Observation', status: 'final', code: { text: 'x' } }, m.headers);
    const demote = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Observation/${good.id}`,
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { ...good, status: 'preliminary' },
    });
    expect(demote.statusCode).toBe(403);
    const stored = await t.app.inject({ url: `/fhir/R4/Observation/${good.id}`, headers: admin() });
    expect(stored.json().status).toBe('final');
    const touchHidden = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Observation/${aliceObsPrelim.id}`,
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { ...aliceObsPrelim, status: 'final' },
    });
    expect(touchHidden.statusCode).toBe(403);
  });

  it('chained criteria', async () => {
    const m = await member(
      await policy({ resource: [{ resourceType: 'Observation', criteria: 'Observation?subject.name=Alice' }] }),
    );
    expect(ids(await get(m, 'Observation')).sort()).toEqual([aliceObsFinal.id, aliceObsPrelim.id].sort());
  });
});

describe('compartments and parameters', () => {
  it('a patient sees their own compartment (%patient from the membership)', async () => {
    const pol = await policy({
      compartment: { reference: '%patient' },
      resource: [{ resourceType: 'Patient' }, { resourceType: 'Observation' }],
    });
    const m = await member(pol, { profile: alice });
    expect((await get(m, `Patient/${alice.id}`)).statusCode).toBe(200);
    expect((await get(m, `Patient/${bob.id}`)).statusCode).toBe(404);
    expect(ids(await get(m, 'Observation')).sort()).toEqual([aliceObsFinal.id, aliceObsPrelim.id].sort());
    expect(ids(await get(m, 'Observation?_include=Observation:subject'))).not.toContain(bob.id);
    expect((await get(m, `Observation/${bobObs.id}/_history`)).statusCode).toBe(404);
  });

  it('parameterised criteria from membership.access parameters', async () => {
    const pol = await policy({ resource: [{ resourceType: 'Observation', criteria: 'Observation?subject=%patient' }] });
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: {
        access: [
          {
            policy: { reference: `AccessPolicy/${pol}` },
            parameter: [{ name: 'patient', valueReference: { reference: `Patient/${bob.id}` } }],
          },
        ],
      },
    });
    expect(ids(await get(m, 'Observation'))).toEqual([bobObs.id]);
  });

  it('a missing parameter grants nothing', async () => {
    const pol = await policy({ resource: [{ resourceType: 'Observation', criteria: 'Observation?subject=%nobody' }] });
    const m = await member(pol);
    expect(ids(await get(m, 'Observation'))).toEqual([]);
  });
});

describe('fields', () => {
  it('hiddenFields are left out of reads, searches and history, and kept on write', async () => {
    const m = await member(
      await policy({ resource: [{ resourceType: 'Patient', hiddenFields: ['birthDate', 'identifier.value'] }] }),
    );
    const read = (await get(m, `Patient/${alice.id}`)).json();
    expect(read.birthDate).toBeUndefined();
    expect(read.identifier[0].system).toBe('urn:mrn');
    expect(read.identifier[0].value).toBeUndefined();
    expect((await get(m, `Patient?_id=${alice.id}`)).body).not.toContain('1970-01-01');
    expect((await get(m, `Patient/${alice.id}/_history`)).body).not.toContain('1970-01-01');
    const updated = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Patient/${alice.id}`,
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { ...read, active: true },
    });
    expect(updated.statusCode).toBe(200);
    const stored = (await t.app.inject({ url: `/fhir/R4/Patient/${alice.id}`, headers: admin() })).json();
    expect(stored.birthDate).toBe('1970-01-01');
    expect(stored.identifier[0].value).toBe('A1');
    expect(stored.active).toBe(true);
  });

  it('hiddenFields are left out of included resources and GraphQL too', async () => {
    const m = await member(
      await policy({
        resource: [{ resourceType: 'Patient', hiddenFields: ['birthDate'] }, { resourceType: 'Observation' }],
      }),
    );
    const inc = await get(m, `Observation?subject=Patient/${alice.id}&_include=Observation:subject`);
    expect(ids(inc)).toContain(alice.id);
    expect(inc.body).not.toContain('1970-01-01');
    const gql = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/$graphql',
      headers: { ...m.headers, 'content-type': 'application/json' },
      payload: { query: `{ Patient(id: "${alice.id}") { id birthDate } }` },
    });
    expect(gql.json().data.Patient.id).toBe(alice.id);
    expect(gql.json().data.Patient.birthDate ?? null).toBeNull();
  });

  it('readonlyFields keep their stored value', async () => {
    const m = await member(await policy({ resource: [{ resourceType: 'Patient', readonlyFields: ['name'] }] }));
    const current = (await get(m, `Patient/${bob.id}`)).json();
    const res = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Patient/${bob.id}`,
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { ...current, name: [{ family: 'Mallory' }], gender: 'male' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().name[0].family).toBe('Bob');
    expect(res.json().gender).toBe('male');
  });
});

describe('criteria on every path', () => {
  it('batch entries, GraphQL, $validate, chains and _has obey a criteria policy', async () => {
    const m = await member(
      await policy({
        resource: [{ resourceType: 'Observation', criteria: 'Observation?status=final' }, { resourceType: 'Patient' }],
      }),
    );
    const batch = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4',
      headers: { ...m.headers, 'content-type': FHIR },
      payload: {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [
          { request: { method: 'GET', url: `Observation/${aliceObsFinal.id}` } },
          { request: { method: 'GET', url: `Observation/${aliceObsPrelim.id}` } },
          { request: { method: 'GET', url: `Observation?subject=Patient/${alice.id}` } },
          {
            request: { method: 'POST', url: 'Observation' },
            resource: { resourceType: 'Observation', status: 'preliminary', code: { text: 'b' } },
          },
        ],
      },
    });
    const entries = batch.json().entry as {
      response: { status: string };
      resource?: { entry?: { resource: Resource }[] };
    }[];
    expect(entries.map((e) => e.response.status.split(' ')[0])).toEqual(['200', '404', '200', '403']);
    expect((entries[2].resource?.entry ?? []).map((e) => e.resource.id)).toEqual([aliceObsFinal.id]);

    const gql = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/$graphql',
      headers: { ...m.headers, 'content-type': 'application/json' },
      payload: { query: `{ ObservationList(subject: "Patient/${alice.id}") { id status } }` },
    });
    expect(gql.json().data.ObservationList).toEqual([{ id: aliceObsFinal.id, status: 'final' }]);
    const hiddenOne = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/$graphql',
      headers: { ...m.headers, 'content-type': 'application/json' },
      payload: { query: `{ Observation(id: "${aliceObsPrelim.id}") { id } }` },
    });
    expect(hiddenOne.json().data?.Observation ?? null).toBeNull();

    expect((await get(m, `Observation/${aliceObsPrelim.id}/$validate`)).statusCode).toBe(404);
    expect((await get(m, `Observation/${aliceObsFinal.id}/$validate`)).statusCode).toBe(200);
    // Bob has only a final Observation, Alice both: a preliminary one exists but is out of reach.
    expect(ids(await get(m, 'Patient?_has:Observation:subject:status=preliminary'))).toEqual([]);
    expect(ids(await get(m, 'Observation?subject.name=Alice&status=preliminary'))).toEqual([]);
  });
});

describe('IP access rules', () => {
  it('a project setting blocks before any policy, for admins too', async () => {
    const project = (
      await t.app.inject({ url: `/fhir/R4/Project/${t.testProject.projectId}`, headers: admin() })
    ).json();
    const withRule = async (value?: string) => {
      const { setting: _none, ...rest } = (
        await t.app.inject({ url: `/fhir/R4/Project/${project.id}`, headers: admin() })
      ).json();
      await t.services
        .systemRepo(project.id)
        .updateResource(value ? { ...rest, setting: [{ name: 'ipAccessRule', valueString: value }] } : rest);
    };
    await withRule('block 192.0.2.0/24');
    try {
      t.services.auth.authenticator.invalidate();
      const blocked = await t.app.inject({
        url: '/fhir/R4/Patient',
        headers: { ...admin(), 'x-forwarded-for': '192.0.2.55' },
      });
      expect(blocked.statusCode).toBe(403);
      expect(blocked.json().resourceType).toBe('OperationOutcome');
      const elsewhere = await t.app.inject({
        url: '/fhir/R4/Patient',
        headers: { ...admin(), 'x-forwarded-for': '198.51.100.1' },
      });
      expect(elsewhere.statusCode).toBe(200);
    } finally {
      await withRule(undefined);
      t.services.auth.authenticator.invalidate();
    }
  });

  it('blocks by CIDR, first match wins', async () => {
    const blocked = await member(
      await policy({
        resource: [{ resourceType: 'Patient' }],
        ipAccessRule: [
          { name: 'office', value: '10.0.0.0/8', action: 'allow' },
          { name: 'rest', value: '*', action: 'block' },
        ],
      }),
    );
    const res = await get(blocked, 'Patient');
    expect(res.statusCode).toBe(403);
    const fromOffice = await t.app.inject({
      url: '/fhir/R4/Patient',
      headers: { ...blocked.headers, 'x-forwarded-for': '10.1.2.3' },
    });
    expect(fromOffice.statusCode).toBe(200);
  });
});

describe('Binary securityContext', () => {
  it('a Binary is readable when its security context is', async () => {
    const upload = async (patientId: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/fhir/R4/Binary',
        headers: { ...admin(), 'content-type': FHIR },
        payload: {
          resourceType: 'Binary',
          contentType: 'text/plain',
          securityContext: { reference: `Patient/${patientId}` },
          data: Buffer.from(`doc of ${patientId}`).toString('base64'),
        },
      });
      expect(res.statusCode).toBe(201);
      return res.json().id as string;
    };
    const aliceDoc = await upload(alice.id);
    const bobDoc = await upload(bob.id);
    const pol = await policy({
      compartment: { reference: '%patient' },
      resource: [{ resourceType: 'Patient' }, { resourceType: 'Binary', compartment: undefined }],
    });
    const m = await member(pol, { profile: alice });
    // Binary itself is in no patient compartment: the rule for Binary here has the policy compartment, so widen it.
    const open = await policy({
      resource: [{ resourceType: 'Patient', criteria: `Patient?_id=${alice.id}` }, { resourceType: 'Binary' }],
    });
    const m2 = await member(open, { profile: alice });
    const read = (m0: TestMember, id: string) =>
      t.app.inject({ url: `/fhir/R4/Binary/${id}`, headers: { ...m0.headers, accept: '*/*' } });
    expect((await read(m2, aliceDoc)).statusCode).toBe(200);
    expect((await read(m2, bobDoc)).statusCode).toBe(404);
    expect((await read(m, bobDoc)).statusCode).toBe(404);
  });
});

describe('admins and members', () => {
  it('members without a policy read project configuration but not secrets, and cannot change it', async () => {
    const m = await member(undefined);
    const client = (await get(m, `ClientApplication/${t.testProject.client.id}`)).json();
    expect(client.name).toBeTruthy();
    expect(client.secret).toBeUndefined();
    const put = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/ProjectMembership/${m.membership.id}`,
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { ...m.membership, admin: true },
    });
    expect(put.statusCode).toBe(403);
    expect((await get(m, 'Login')).statusCode).toBe(403);
    expect((await get(m, 'JsonWebKey')).statusCode).toBe(403);
  });

  it('admins cannot grant themselves super admin or link other projects', async () => {
    const project = (
      await t.app.inject({ url: `/fhir/R4/Project/${t.testProject.projectId}`, headers: admin() })
    ).json();
    const res = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Project/${project.id}`,
      headers: { ...admin(), 'content-type': FHIR },
      payload: {
        ...project,
        superAdmin: true,
        link: [{ project: { reference: 'Project/00000000-0000-0000-0000-000000000000' } }],
        description: 'changed',
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().superAdmin).toBeUndefined();
    expect(res.json().link).toBeUndefined();
    expect(res.json().description).toBe('changed');
    const create = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Project',
      headers: { ...admin(), 'content-type': FHIR },
      payload: { resourceType: 'Project', name: 'rogue' },
    });
    expect(create.statusCode).toBe(403);
    const user = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/User',
      headers: { ...admin(), 'content-type': FHIR },
      payload: {
        resourceType: 'User',
        firstName: 'x',
        lastName: 'y',
        email: 'rogue@example.com',
        passwordHash: 'forged',
      },
    });
    expect(user.statusCode).toBe(201);
    expect(user.json().project.reference).toBe(`Project/${t.testProject.projectId}`);
    const row = await t.pool.query(`SELECT content FROM "User" WHERE id = $1`, [user.json().id]);
    expect(row.rows[0].content).not.toContain('forged');
  });

  it('a disabled membership stops its tokens at once', async () => {
    const m = await member(undefined);
    expect((await get(m, 'Patient')).statusCode).toBe(200);
    await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/ProjectMembership/${m.membership.id}`,
      headers: { ...admin(), 'content-type': FHIR },
      payload: { ...m.membership, active: false },
    });
    expect((await get(m, 'Patient')).statusCode).toBe(401);
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: m.email, password: m.password },
    });
    expect(login.statusCode).toBe(403);
    expect(login.json().resourceType).toBe('OperationOutcome');
    expect(login.json().code).toBeUndefined();
    // In the browser flow the app hears access_denied.
    const redirectUri = 'https://disabled.example/cb';
    const client = (
      await t.app.inject({
        method: 'POST',
        url: `/admin/projects/${t.testProject.projectId}/client`,
        headers: admin(),
        payload: { name: 'Disabled check', redirectUri },
      })
    ).json();
    const browser = await t.app.inject({
      method: 'POST',
      url: '/oauth2/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: redirectUri,
        code_challenge: 'c'.repeat(43),
        code_challenge_method: 'S256',
        state: 's1',
        email: m.email,
        password: m.password,
      }).toString(),
    });
    expect(browser.statusCode).toBe(302);
    const location = new URL(browser.headers.location as string);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('a deleted user stops its tokens', async () => {
    const m = await member(undefined);
    await t.services.systemRepo().deleteResource('User', m.user.id as string);
    expect((await get(m, 'Patient')).statusCode).toBe(401);
  });
});
