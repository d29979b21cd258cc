/** SMART App Launch 2.0: scopes v1 and v2 narrow access on every path; launch context in tokens. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import {
  addTestMember,
  createTestProject,
  formPost as postForm,
  pkcePair,
  registerClient,
  signIn,
} from '../test/auth.js';
import type { ClientApplication } from './types.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
let alice: Resource & { id: string };
let bob: Resource & { id: string };
let encounter: Resource & { id: string };
let client: ClientApplication;
const REDIRECT = 'https://smart.example.org/cb';

async function post(resource: Resource): Promise<Resource & { id: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: resource,
  });
  return res.json();
}

beforeAll(async () => {
  t = await createTestApp();
  alice = await post({ resourceType: 'Patient', name: [{ family: 'Alice' }] });
  bob = await post({ resourceType: 'Patient', name: [{ family: 'Bob' }] });
  encounter = await post({
    resourceType: 'Encounter',
    status: 'finished',
    class: { code: 'AMB' },
    subject: { reference: `Patient/${alice.id}` },
  });
  for (const [subject, category, status] of [
    [alice, 'laboratory', 'final'],
    [alice, 'vital-signs', 'final'],
    [bob, 'laboratory', 'final'],
    [alice, 'laboratory', 'preliminary'],
  ] as const) {
    await post({
      resourceType: 'Observation',
      status,
      category: [
        { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: category }] },
      ],
      code: { text: category },
      subject: { reference: `Patient/${subject.id}` },
    });
  }
  client = await registerClient(t.app, t.testProject.projectId, t.authHeaders, {
    name: 'SMART app',
    redirectUri: REDIRECT,
  });
});
afterAll(async () => {
  await t?.close();
});

const bundle = async (headers: Record<string, string>, url: string) => {
  const res = await t.app.inject({ url: `/fhir/R4/${url}`, headers });
  return {
    status: res.statusCode,
    entries: (res.json().entry ?? []) as { resource: Resource & { subject?: { reference: string } } }[],
  };
};

async function withScope(scope: string, extra: Record<string, unknown> = {}) {
  const tokens = await signIn(t.app, t.testProject.email, t.testProject.password, { scope, ...extra });
  return { tokens, headers: { authorization: `Bearer ${tokens.access_token}` } };
}

describe('user/ and system/ scopes', () => {
  it('v1 user/Observation.read reads and searches Observations only, writes nothing', async () => {
    const { headers } = await withScope('openid user/Observation.read');
    expect((await bundle(headers, 'Observation')).entries.length).toBe(4);
    expect((await bundle(headers, 'Patient')).status).toBe(403);
    // _include of a type outside the scopes is left out.
    const inc = await bundle(headers, 'Observation?_include=Observation:subject');
    expect(inc.entries.every((e) => e.resource.resourceType === 'Observation')).toBe(true);
    const write = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Observation',
      headers: { ...headers, 'content-type': FHIR },
      payload: { resourceType: 'Observation', status: 'final', code: { text: 'x' } },
    });
    expect(write.statusCode).toBe(403);
  });

  it('v1 user/*.write writes but does not read', async () => {
    const { headers } = await withScope('user/*.write');
    const write = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Basic',
      headers: { ...headers, 'content-type': FHIR },
      payload: { resourceType: 'Basic', code: { text: 'w' } },
    });
    expect(write.statusCode).toBe(201);
    expect((await bundle(headers, 'Basic')).status).toBe(403);
  });

  it('v2 user/Observation.rs?category=laboratory: the query narrows reads, searches and includes', async () => {
    const { headers } = await withScope(
      'user/Observation.rs?category=http://terminology.hl7.org/CodeSystem/observation-category|laboratory user/Patient.rs',
    );
    const labs = await bundle(headers, 'Observation');
    expect(labs.entries.length).toBe(3);
    const rev = await bundle(headers, `Patient?_id=${alice.id}&_revinclude=Observation:subject`);
    expect(rev.entries.filter((e) => e.resource.resourceType === 'Observation').length).toBe(2);
  });

  it('v2 letters: r without s reads one resource but cannot search; c without u creates but cannot update', async () => {
    const { headers } = await withScope('user/Patient.r user/Basic.c');
    expect((await t.app.inject({ url: `/fhir/R4/Patient/${alice.id}`, headers })).statusCode).toBe(200);
    expect((await bundle(headers, 'Patient')).status).toBe(403);
    const created = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Basic',
      headers: { ...headers, 'content-type': FHIR },
      payload: { resourceType: 'Basic', code: { text: 'c' } },
    });
    expect(created.statusCode).toBe(201);
    const update = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Basic/${created.json().id}`,
      headers: { ...headers, 'content-type': FHIR },
      payload: { ...(created.json() as object), code: { text: 'u' } },
    });
    expect(update.statusCode).toBe(403);
  });

  it('scopes only narrow: a readonly policy stays readonly under user/*.cruds', async () => {
    const policy = (
      await t.app.inject({
        method: 'POST',
        url: '/fhir/R4/AccessPolicy',
        headers: { ...t.authHeaders, 'content-type': FHIR },
        payload: { resourceType: 'AccessPolicy', resource: [{ resourceType: 'Patient', readonly: true }] },
      })
    ).json();
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
      scope: 'user/*.cruds',
    });
    expect((await bundle(m.headers, 'Patient')).status).toBe(200);
    expect((await bundle(m.headers, 'Observation')).status).toBe(403);
    const write = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { ...m.headers, 'content-type': FHIR },
      payload: { resourceType: 'Patient' },
    });
    expect(write.statusCode).toBe(403);
  });

  it('malformed and unknown scopes are dropped from what is granted', async () => {
    const { tokens } = await withScope('openid user/Observation.xyz patient/Foo.read nonsense');
    expect(tokens.scope).toBe('openid patient/Foo.read');
  });
});

describe('administration under scopes', () => {
  it('a scope-narrowed admin token cannot administer; an unscoped or all-types one can', async () => {
    const url = `/admin/projects/${t.testProject.projectId}`;
    const narrow = await withScope('openid user/Patient.rs');
    expect((await t.app.inject({ url, headers: narrow.headers })).statusCode).toBe(403);
    expect((await t.app.inject({ url: '/scim/v2/Users', headers: narrow.headers })).statusCode).toBe(403);
    const init = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Project/$init',
      headers: { ...narrow.headers, 'content-type': FHIR },
      payload: { resourceType: 'Parameters', parameter: [{ name: 'name', valueString: 'x' }] },
    });
    expect(init.statusCode).toBe(403);
    const all = await withScope('openid user/*.*');
    expect((await t.app.inject({ url, headers: all.headers })).statusCode).toBe(200);
    expect((await t.app.inject({ url, headers: t.authHeaders })).statusCode).toBe(200);
  });
});

describe('patient/ scopes and launch context', () => {
  it('a patient user with patient/*.rs sees only their compartment; launch/patient returns the patient', async () => {
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      profile: alice,
      scope: 'openid fhirUser launch/patient patient/*.rs',
    });
    expect(m.tokens.patient).toBe(alice.id);
    const obs = await bundle(m.headers, 'Observation');
    expect(obs.entries.length).toBe(3);
    expect(obs.entries.every((e) => e.resource.subject?.reference === `Patient/${alice.id}`)).toBe(true);
    expect((await t.app.inject({ url: `/fhir/R4/Patient/${bob.id}`, headers: m.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `/fhir/R4/Patient/${bob.id}/_history`, headers: m.headers })).statusCode).toBe(
      404,
    );
    const everyone = await bundle(m.headers, 'Patient');
    expect(everyone.entries.map((e) => e.resource.id)).toEqual([alice.id]);
  });

  it('EHR launch: a SmartAppLaunch gives patient and encounter context through /oauth2/authorize', async () => {
    const launch = await post({
      resourceType: 'SmartAppLaunch',
      patient: { reference: `Patient/${alice.id}` },
      encounter: { reference: `Encounter/${encounter.id}` },
    });
    const pkce = pkcePair();
    const params = {
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: REDIRECT,
      scope: 'launch openid fhirUser patient/Observation.rs patient/Encounter.rs',
      state: 'ehr',
      launch: launch.id,
      aud: `${t.config.baseUrl}fhir/R4`,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    };
    const signin = await t.app.inject({
      method: 'POST',
      url: '/oauth2/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        ...params,
        email: t.testProject.email,
        password: t.testProject.password,
      }).toString(),
    });
    expect(signin.statusCode).toBe(302);
    const code = new URL(signin.headers.location as string).searchParams.get('code') as string;
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: pkce.verifier,
        redirect_uri: REDIRECT,
        client_id: client.id as string,
      }).toString(),
    });
    expect(token.statusCode).toBe(200);
    expect(token.json().patient).toBe(alice.id);
    expect(token.json().encounter).toBe(encounter.id);
    expect(token.json().need_patient_banner).toBe(true);
    // The practitioner's patient/ scopes cover the launch patient only.
    const headers = { authorization: `Bearer ${token.json().access_token}` };
    const obs = await bundle(headers, 'Observation');
    expect(obs.entries.every((e) => e.resource.subject?.reference === `Patient/${alice.id}`)).toBe(true);
    expect(obs.entries.length).toBe(3);
  });

  it("a SmartAppLaunch of another project gives no context, and its patient's data stays out of reach", async () => {
    const other = await createTestProject(t.app, t.services, 'Other clinic');
    const inject = (url: string, payload: Resource) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { ...other.headers, 'content-type': FHIR },
        payload,
      });
    const theirPatient = (await inject('/fhir/R4/Patient', { resourceType: 'Patient' })).json();
    const theirEncounter = (
      await inject('/fhir/R4/Encounter', {
        resourceType: 'Encounter',
        status: 'finished',
        class: { code: 'AMB' },
        subject: { reference: `Patient/${theirPatient.id}` },
      } as Resource)
    ).json();
    const launch = (
      await inject('/fhir/R4/SmartAppLaunch', {
        resourceType: 'SmartAppLaunch',
        patient: { reference: `Patient/${theirPatient.id}` },
        encounter: { reference: `Encounter/${theirEncounter.id}` },
      } as Resource)
    ).json();
    const { tokens, headers } = await withScope('launch openid patient/*.rs', { launch: launch.id });
    expect(tokens.patient).toBeUndefined();
    expect(tokens.encounter).toBeUndefined();
    expect((await bundle(headers, 'Observation')).entries.length).toBe(0);
  });

  it('standalone launch/patient by a practitioner: the server asks which patient, and puts it in the token', async () => {
    const pkce = pkcePair();
    const carried = {
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: REDIRECT,
      scope: 'openid launch/patient patient/Observation.rs',
      state: 'pick',
      aud: `${t.config.baseUrl}fhir/R4`,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    };
    const formPost = (url: string, fields: Record<string, string>) => postForm(t.app, url, fields);
    const picker = await formPost('/oauth2/authorize', {
      ...carried,
      email: t.testProject.email,
      password: t.testProject.password,
    });
    expect(picker.statusCode).toBe(200);
    expect(picker.body).toContain('Choose a patient');
    expect(picker.body).toContain(`value="${alice.id}"`);
    expect(picker.body).toContain(`value="${bob.id}"`);
    expect(picker.body).toContain('action="/oauth2/authorize/patient"');
    const login = /name="login" value="([^"]+)"/.exec(picker.body)?.[1] as string;
    // Searching by name narrows the list.
    const searched = await formPost('/oauth2/authorize/patient', { ...carried, login, q: 'Alice' });
    expect(searched.body).toContain(`value="${alice.id}"`);
    expect(searched.body).not.toContain(`value="${bob.id}"`);
    // An unknown patient is refused; the code is not handed out.
    const unknown = await formPost('/oauth2/authorize/patient', {
      ...carried,
      login,
      patient: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.location).toBeUndefined();
    const chosen = await formPost('/oauth2/authorize/patient', { ...carried, login, patient: alice.id });
    expect(chosen.statusCode).toBe(302);
    const location = new URL(chosen.headers.location as string);
    expect(location.searchParams.get('state')).toBe('pick');
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') as string,
        code_verifier: pkce.verifier,
        redirect_uri: REDIRECT,
        client_id: client.id as string,
      }).toString(),
    });
    expect(token.json().patient).toBe(alice.id);
    expect(token.json().need_patient_banner).toBe(true);
    const obs = await bundle({ authorization: `Bearer ${token.json().access_token}` }, 'Observation');
    expect(obs.entries.length).toBe(3);
    expect(obs.entries.every((e) => e.resource.subject?.reference === `Patient/${alice.id}`)).toBe(true);
    // The sign-in is done: no second pick.
    const again = await formPost('/oauth2/authorize/patient', { ...carried, login, patient: bob.id });
    expect(again.statusCode).toBe(400);
  });

  it('the wrong aud is refused', async () => {
    const res = await t.app.inject({
      url: `/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.id as string, redirect_uri: REDIRECT, aud: 'https://other.example/fhir', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
    });
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_request');
  });

  it('patient/ scopes without a patient in context grant nothing', async () => {
    const { headers } = await withScope('patient/Observation.rs');
    expect((await bundle(headers, 'Observation')).entries.length).toBe(0);
  });
});

describe('scopes on every path', () => {
  const gql = (headers: Record<string, string>, query: string) =>
    t.app.inject({
      method: 'POST',
      url: '/fhir/R4/$graphql',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: { query },
    });
  const batch = (headers: Record<string, string>, entry: unknown[]) =>
    t.app.inject({
      method: 'POST',
      url: '/fhir/R4',
      headers: { ...headers, 'content-type': FHIR },
      payload: { resourceType: 'Bundle', type: 'batch', entry },
    });
  const statuses = (res: { json: () => { entry: { response: { status: string } }[] } }) =>
    res.json().entry.map((e) => e.response.status.split(' ')[0]);

  it('v1 types: GraphQL, batch entries, $validate, chains, _has and system history', async () => {
    const { headers } = await withScope('openid user/Observation.rs');
    // GraphQL: the type outside the scopes is not listed, nor resolved through a reference.
    const q = await gql(
      headers,
      '{ PatientList { id } ObservationList { id subject { resource { ... on Patient { id } } } } }',
    );
    expect(q.json().data.PatientList ?? []).toEqual([]);
    const observations = q.json().data.ObservationList as { subject: { resource: unknown } }[];
    expect(observations.length).toBe(4);
    expect(observations.every((o) => o.subject.resource === null)).toBe(true);
    // Batch: each entry answers for itself.
    const b = await batch(headers, [
      { request: { method: 'GET', url: `Patient/${alice.id}` } },
      { request: { method: 'GET', url: 'Observation' } },
      {
        request: { method: 'POST', url: 'Observation' },
        resource: { resourceType: 'Observation', status: 'final', code: { text: 'x' } },
      },
    ]);
    expect(statuses(b)).toEqual(['403', '200', '403']);
    // Operations on instances read them first.
    expect((await t.app.inject({ url: `/fhir/R4/Patient/${alice.id}/$validate`, headers })).statusCode).toBe(403);
    // A chain or _has through a type outside the scopes matches nothing.
    expect((await bundle(headers, 'Observation?subject.name=Alice')).entries).toEqual([]);
    expect((await bundle(headers, 'Patient?_has:Observation:subject:status=final')).status).toBe(403);
    // System history leaves the other types out.
    const history = await t.app.inject({ url: '/fhir/R4/_history?_count=1000', headers });
    expect(history.statusCode).toBe(200);
    const types = new Set(
      (history.json().entry as { resource?: Resource }[]).map((e) => e.resource?.resourceType).filter(Boolean),
    );
    expect([...types]).toEqual(['Observation']);
  });

  it('v2 queries: GraphQL, history, _has and batch see only the matching rows', async () => {
    const { headers } = await withScope(
      'openid user/Observation.rs?category=http://terminology.hl7.org/CodeSystem/observation-category|laboratory user/Patient.rs',
    );
    const q = await gql(headers, '{ ObservationList { id code { text } } }');
    const texts = (q.json().data.ObservationList as { code: { text: string } }[]).map((o) => o.code.text);
    expect(texts.sort()).toEqual(['laboratory', 'laboratory', 'laboratory']);
    const history = await t.app.inject({ url: '/fhir/R4/Observation/_history?_count=1000', headers });
    expect(history.body).not.toContain('vital-signs');
    // Only Alice has a vital-signs Observation, which these scopes do not show.
    expect((await bundle(headers, 'Patient?_has:Observation:subject:code:text=vital-signs')).entries).toEqual([]);
    expect(
      (await bundle(headers, 'Patient?_has:Observation:subject:code:text=laboratory')).entries.map(
        (e) => e.resource.id,
      ),
    ).toContain(alice.id);
    const b = await batch(headers, [{ request: { method: 'GET', url: 'Observation?code:text=vital-signs' } }]);
    expect(b.json().entry[0].resource.entry ?? []).toEqual([]);
  });

  it("patient/ scopes: GraphQL, batch and Binary stay in the launch patient's compartment", async () => {
    const doc = (patient: Resource & { id: string }) =>
      post({
        resourceType: 'Binary',
        contentType: 'text/plain',
        securityContext: { reference: `Patient/${patient.id}` },
        data: Buffer.from(`about ${patient.id}`).toString('base64'),
      } as Resource);
    const bobDoc = await doc(bob);
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      profile: alice,
      scope: 'openid launch/patient patient/*.rs',
    });
    const q = await gql(m.headers, '{ PatientList { id } ObservationList { subject { reference } } }');
    expect((q.json().data.PatientList as { id: string }[]).map((p) => p.id)).toEqual([alice.id]);
    const subjects = (q.json().data.ObservationList as { subject: { reference: string } }[]).map(
      (o) => o.subject.reference,
    );
    expect(subjects.length).toBe(3);
    expect(new Set(subjects)).toEqual(new Set([`Patient/${alice.id}`]));
    const b = await batch(m.headers, [
      { request: { method: 'GET', url: `Patient/${bob.id}` } },
      { request: { method: 'GET', url: `Observation?subject=Patient/${bob.id}` } },
    ]);
    expect(statuses(b)[0]).toBe('404');
    expect(b.json().entry[1].resource.entry ?? []).toEqual([]);
    const binary = await t.app.inject({
      url: `/fhir/R4/Binary/${bobDoc.id}`,
      headers: { ...m.headers, accept: '*/*' },
    });
    expect(binary.statusCode).toBe(404);
  });
});
