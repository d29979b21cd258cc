/** SMART standalone launch/encounter through the real browser flow: the encounter picker, and `encounter` in the tokens. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../../test/app.js';
import { addTestMember, createTestProject, formPost as postForm, pkcePair, registerClient } from '../../test/auth.js';
import type { ClientApplication, Project } from '../types.js';
import { NO_ENCOUNTER } from './encounter-picker.js';

const FHIR = 'application/fhir+json';
const REDIRECT = 'https://smart.example.org/cb';
type Saved = Resource & { id: string };

let t: TestApp;
let client: ClientApplication;
let alice: Saved;
let bob: Saved;
let carol: Saved;
/** Alice's encounters: older (2023), newer (2024), and one in progress with no period. */
let older: Saved;
let newer: Saved;
let ongoing: Saved;
let bobs: Saved;
/** An encounter of Alice's id in a project linked to the test project: readable, but not the project signed into. */
let linked: Saved;

async function post(resource: Resource, headers = t.authHeaders): Promise<Saved> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType}`,
    headers: { ...headers, 'content-type': FHIR },
    payload: resource,
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

function encounterOf(patient: Saved, extra: Record<string, unknown>): Resource {
  return {
    resourceType: 'Encounter',
    subject: { reference: `Patient/${patient.id}` },
    ...extra,
  } as Resource;
}

const formPost = (url: string, fields: Record<string, string>) => postForm(t.app, url, fields);

/** The authorization request of a standalone launch with `scope`, signed in as `email`. */
async function signInForm(scope: string, email = t.testProject.email, password = t.testProject.password) {
  const pkce = pkcePair();
  const carried: Record<string, string> = {
    response_type: 'code',
    client_id: client.id as string,
    redirect_uri: REDIRECT,
    scope,
    state: 'standalone',
    aud: `${t.config.baseUrl}fhir/R4`,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
  };
  const page = await formPost('/oauth2/authorize', { ...carried, email, password });
  const login = /name="login" value="([^"]+)"/.exec(page.body)?.[1] as string;
  return { pkce, carried, page, login };
}

async function redeem(location: string | undefined, verifier: string) {
  expect(location).toBeDefined();
  const url = new URL(location as string);
  expect(url.searchParams.get('state')).toBe('standalone');
  const token = await formPost('/oauth2/token', {
    grant_type: 'authorization_code',
    code: url.searchParams.get('code') as string,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: client.id as string,
  });
  expect(token.statusCode).toBe(200);
  return token.json();
}

const refresh = async (refreshToken: string) => {
  const res = await formPost('/oauth2/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.id as string,
  });
  expect(res.statusCode).toBe(200);
  return res.json();
};

/** The encounter ids offered by a picker page, in order. */
const offered = (body: string) => [...body.matchAll(/name="encounter" value="([^"]+)"/g)].map((m) => m[1]);

beforeAll(async () => {
  t = await createTestApp();
  alice = await post({ resourceType: 'Patient', name: [{ given: ['Alice'], family: 'Ames' }] } as Resource);
  bob = await post({ resourceType: 'Patient', name: [{ family: 'Bob' }] } as Resource);
  carol = await post({ resourceType: 'Patient', name: [{ family: 'Carol' }] } as Resource);
  older = await post(
    encounterOf(alice, {
      status: 'finished',
      class: { code: 'AMB', display: 'ambulatory' },
      type: [{ text: 'Check-up' }],
      period: { start: '2023-02-01T09:00:00Z', end: '2023-02-01T09:30:00Z' },
    }),
  );
  newer = await post(
    encounterOf(alice, {
      status: 'finished',
      class: { code: 'EMER' },
      type: [{ coding: [{ code: 'x', display: 'Emergency visit' }] }],
      period: { start: '2024-06-01T22:00:00Z', end: '2024-06-02T01:00:00Z' },
    }),
  );
  ongoing = await post(encounterOf(alice, { status: 'in-progress', class: { code: 'IMP' } }));
  bobs = await post(encounterOf(bob, { status: 'finished', class: { code: 'AMB' }, period: { start: '2025-01-01' } }));
  for (let day = 1; day <= 22; day++) {
    await post(
      encounterOf(carol, {
        status: 'finished',
        class: { code: 'AMB' },
        period: { start: `2022-03-${String(day).padStart(2, '0')}` },
      }),
    );
  }
  const other = await createTestProject(t.app, t.services, 'Linked clinic');
  linked = await post(
    encounterOf(alice, { status: 'finished', class: { code: 'AMB' }, period: { start: '2025-05-05' } }),
    other.headers,
  );
  const system = t.services.auth.deps.systemRepo();
  const project = (await system.readResource('Project', t.testProject.projectId)).resource as Project;
  await system.updateResource({
    ...project,
    link: [{ project: { reference: `Project/${other.projectId}` } }],
  } as Project);
  client = await registerClient(t.app, t.testProject.projectId, t.authHeaders, {
    name: 'SMART app',
    redirectUri: REDIRECT,
  });
});
afterAll(async () => {
  await t?.close();
});

/** Signs in as the practitioner admin, picks Alice, and answers the encounter picker page. */
async function pickAlice(scope: string) {
  const signin = await signInForm(scope);
  expect(signin.page.body).toContain('Choose a patient');
  const picked = await formPost('/oauth2/authorize/patient', {
    ...signin.carried,
    login: signin.login,
    patient: alice.id,
  });
  return { ...signin, picked };
}

describe('standalone launch/encounter', () => {
  it('is announced in the SMART configuration', async () => {
    const config = (await t.app.inject({ url: '/fhir/R4/.well-known/smart-configuration' })).json();
    expect(config.capabilities).toContain('context-standalone-encounter');
    expect(config.scopes_supported).toContain('launch/encounter');
  });

  it("the linked project's encounter is readable by the member (so the picker must leave it out itself)", async () => {
    const res = await t.app.inject({ url: `/fhir/R4/Encounter?patient=Patient/${alice.id}`, headers: t.authHeaders });
    expect(res.json().entry.map((e: { resource: Saved }) => e.resource.id)).toContain(linked.id);
  });

  it("after the patient picker, shows the patient's encounters newest first; the one chosen is in the token and after refresh", async () => {
    const launches = async () =>
      Number(
        (await t.pool.query("SELECT count(*) AS n FROM resource WHERE resource_type = 'SmartAppLaunch'")).rows[0].n,
      );
    const launchesBefore = await launches();
    const { picked, carried, login, pkce } = await pickAlice(
      'openid launch/patient launch/encounter patient/Encounter.rs offline_access',
    );
    expect(picked.statusCode).toBe(200);
    expect(picked.headers['content-type']).toContain('text/html');
    expect(picked.body).toContain('Choose an encounter');
    expect(picked.body).toContain('Alice Ames');
    expect(picked.body).toContain('action="/oauth2/authorize/encounter"');
    // Alice's own, newest period first; not Bob's, not the linked project's.
    const ids = offered(picked.body);
    expect(ids.slice(0, 2)).toEqual([newer.id, older.id]);
    expect(ids).toContain(ongoing.id);
    expect(ids).not.toContain(bobs.id);
    expect(ids).not.toContain(linked.id);
    expect(ids.at(-1)).toBe(NO_ENCOUNTER);
    expect(picked.body).toContain('No encounter');
    expect(picked.body).toContain('Emergency visit, EMER · finished · 2024-06-01 22:00:00Z – 2024-06-02 01:00:00Z');
    expect(picked.body).toContain('Check-up, ambulatory · finished');
    expect(picked.body).toContain('IMP · in-progress');
    expect(picked.body).not.toContain('Older encounters');

    const chosen = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: older.id });
    expect(chosen.statusCode).toBe(302);
    const tokens = await redeem(chosen.headers.location, pkce.verifier);
    expect(tokens.patient).toBe(alice.id);
    expect(tokens.encounter).toBe(older.id);
    const refreshed = await refresh(tokens.refresh_token);
    expect(refreshed.patient).toBe(alice.id);
    expect(refreshed.encounter).toBe(older.id);
    // The patient picker's launch gained the encounter: one launch for the sign-in, not two.
    expect(await launches()).toBe(launchesBefore + 1);
    // The sign-in is done: no second choice.
    const again = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: newer.id });
    expect(again.statusCode).toBe(400);
  });

  it('launch/encounter alone asks for the patient first, and gives the encounter without the patient', async () => {
    const { picked, carried, login, pkce } = await pickAlice('openid launch/encounter');
    expect(picked.body).toContain('Choose an encounter');
    expect(offered(picked.body).slice(0, 2)).toEqual([newer.id, older.id]);
    const chosen = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: newer.id });
    expect(chosen.statusCode).toBe(302);
    const tokens = await redeem(chosen.headers.location, pkce.verifier);
    expect(tokens.encounter).toBe(newer.id);
    // The app asked for no patient context.
    expect(tokens.patient).toBeUndefined();
  });

  it('"No encounter" gives the patient and no encounter', async () => {
    const { picked, carried, login, pkce } = await pickAlice('openid launch/patient launch/encounter offline_access');
    expect(offered(picked.body)).toContain(NO_ENCOUNTER);
    const chosen = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: NO_ENCOUNTER });
    expect(chosen.statusCode).toBe(302);
    const tokens = await redeem(chosen.headers.location, pkce.verifier);
    expect(tokens.patient).toBe(alice.id);
    expect(tokens.encounter).toBeUndefined();
    expect((await refresh(tokens.refresh_token)).encounter).toBeUndefined();
  });

  it("a forged encounter (another patient's, another project's, unknown, malformed) is refused and gives no code", async () => {
    const { carried, login, pkce } = await pickAlice('openid launch/patient launch/encounter');
    for (const forged of [bobs.id, linked.id, '00000000-0000-4000-8000-000000000000', 'not an id']) {
      const res = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: forged });
      expect(res.statusCode).toBe(400);
      expect(res.json().resourceType).toBe('OperationOutcome');
      expect(res.headers.location).toBeUndefined();
    }
    // The sign-in goes on: a real choice still works.
    const chosen = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: newer.id });
    expect((await redeem(chosen.headers.location, pkce.verifier)).encounter).toBe(newer.id);
  });

  it('pages through many encounters', async () => {
    const signin = await signInForm('openid launch/patient launch/encounter');
    const first = await formPost('/oauth2/authorize/patient', {
      ...signin.carried,
      login: signin.login,
      patient: carol.id,
    });
    expect(offered(first.body).length).toBe(21);
    expect(first.body).toContain('2022-03-22');
    expect(first.body).toContain('Older encounters');
    expect(first.body).not.toContain('Newer encounters');
    const second = await formPost('/oauth2/authorize/encounter', {
      ...signin.carried,
      login: signin.login,
      offset: '20',
    });
    expect(offered(second.body).length).toBe(3);
    expect(second.body).toContain('2022-03-01');
    expect(second.body).toContain('Newer encounters');
    expect(second.body).not.toContain('Older encounters');
    const bad = await formPost('/oauth2/authorize/encounter', { ...signin.carried, login: signin.login, offset: '-1' });
    expect(bad.statusCode).toBe(400);
  });

  it('without launch/encounter, or in an EHR launch, no encounter picker is shown', async () => {
    const { picked, pkce } = await pickAlice('openid launch/patient');
    expect(picked.statusCode).toBe(302);
    expect((await redeem(picked.headers.location, pkce.verifier)).encounter).toBeUndefined();

    const launch = await post({
      resourceType: 'SmartAppLaunch',
      patient: { reference: `Patient/${alice.id}` },
    } as Resource);
    const ehr = pkcePair();
    const res = await formPost('/oauth2/authorize', {
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: REDIRECT,
      scope: 'launch openid launch/encounter',
      state: 'standalone',
      launch: launch.id,
      code_challenge: ehr.challenge,
      code_challenge_method: 'S256',
      email: t.testProject.email,
      password: t.testProject.password,
    });
    expect(res.statusCode).toBe(302);
    const tokens = await redeem(res.headers.location, ehr.verifier);
    expect(tokens.patient).toBe(alice.id);
    expect(tokens.encounter).toBeUndefined();
  });

  it('a signed-in patient chooses among their own encounters, as their access policy allows', async () => {
    const policy = await post({
      resourceType: 'AccessPolicy',
      resource: [{ resourceType: 'Patient' }, { resourceType: 'Encounter', criteria: 'Encounter?status=finished' }],
    } as Resource);
    const patient = await addTestMember(t.app, t.services, t.testProject.projectId, {
      profile: alice,
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    const plain = await signInForm('openid launch/patient', patient.email, patient.password);
    expect(plain.page.statusCode).toBe(302);

    const { page, carried, login, pkce } = await signInForm(
      'openid launch/patient launch/encounter',
      patient.email,
      patient.password,
    );
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Choose an encounter');
    expect(offered(page.body)).toEqual([newer.id, older.id, NO_ENCOUNTER]);
    // The in-progress encounter is hidden by the policy: choosing it anyway is refused.
    const hidden = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: ongoing.id });
    expect(hidden.statusCode).toBe(400);
    const chosen = await formPost('/oauth2/authorize/encounter', { ...carried, login, encounter: newer.id });
    const tokens = await redeem(chosen.headers.location, pkce.verifier);
    expect(tokens.patient).toBe(alice.id);
    expect(tokens.encounter).toBe(newer.id);
  });
});
