/**
 * The SDK's sign-in flows against a real server: email and password with PKCE, the redirect flow
 * (authorize URL, the server's sign-in form, processCode), the TOTP second factor (verify and
 * enrolment on the way), client credentials, an existing token, renewal before expiry with one
 * refresh in flight, renewal after a refused token, onUnauthenticated, sign-out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HearthClient,
  MemoryStorage,
  OperationOutcomeError,
  type FetchLike,
  type LoginState,
  type Project,
  type Resource,
} from '@hearth/core';
import { createProject, createUser } from '../../auth/projects.js';
import { createTestApp, getFreePort, type TestApp } from '../app.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, authConfig } from './server.test-util.js';
import { freshTotp } from '../totp.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ listen: true, config: authConfig() });
});
afterAll(async () => {
  await t?.close();
});

/** A fetch that records what it sends (method, path, grant type) and the token it sent it with. */
function recordingFetch() {
  const sent: { method: string; path: string; grant?: string; token?: string }[] = [];
  const fetchImpl: FetchLike = async (input, init) => {
    const url = new URL(input.toString());
    const headers = (init?.headers ?? {}) as Record<string, string>;
    const body = typeof init?.body === 'string' ? init.body : '';
    sent.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      grant: url.pathname.endsWith('/oauth2/token') ? (new URLSearchParams(body).get('grant_type') ?? '') : undefined,
      token: headers.Authorization?.replace('Bearer ', ''),
    });
    return fetch(input, init);
  };
  return { sent, fetchImpl };
}

function newClient(options: { onUnauthenticated?: () => void; storage?: MemoryStorage; fetch?: FetchLike } = {}) {
  return new HearthClient({
    baseUrl: t.baseUrl,
    storage: options.storage ?? new MemoryStorage(),
    cacheTime: 0,
    onUnauthenticated: options.onUnauthenticated,
    fetch: options.fetch,
  });
}

async function signedInAdmin(): Promise<HearthClient> {
  const hearth = newClient();
  await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  return hearth;
}

describe('HearthClient sign-in against a server', () => {
  it('signs in with email and password (PKCE S256) and acts as its profile', async () => {
    const hearth = newClient();
    const profile = await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    expect(profile.resourceType).toBe('Practitioner');
    expect(hearth.isAuthenticated()).toBe(true);
    expect(hearth.getActiveLogin()?.accessToken).toBeTruthy();
    const details = await hearth.getSessionDetails();
    expect(details?.project?.resourceType).toBe('Project');
    expect(hearth.getProject()?.reference).toBe(`Project/${details?.project?.id}`);
    const patient = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'SignedIn' }] });
    expect((await hearth.readResource('Patient', patient.id as string)).id).toBe(patient.id);
  });

  it('rejects a wrong password with the server outcome', async () => {
    const hearth = newClient();
    const err = await hearth
      .signInWithPassword({ email: ADMIN_EMAIL, password: 'wrong-password-123' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    expect((err as OperationOutcomeError).status).toBe(400);
    expect(hearth.isAuthenticated()).toBe(false);
  });

  it('signs in through /oauth2/authorize and processCode, refusing a foreign state', async () => {
    // A project's own user and client (not the super admin's first-party ones).
    const deps = t.services.auth.deps;
    const email = `redirect-${Date.now()}@example.com`;
    const password = 'sdk redirect password 1';
    const user = await createUser(deps, { firstName: 'Rae', lastName: 'Redirect', email, password });
    const { project } = await createProject(deps, { name: 'SDK redirect project', owner: user });
    const redirectUri = `http://127.0.0.1:${await getFreePort()}/callback`;
    const app = (
      await t.services.systemRepo(project.id).createResource<Resource>({
        resourceType: 'ClientApplication',
        name: 'SDK redirect client',
        redirectUris: [redirectUri],
      })
    ).resource;
    const hearth = new HearthClient({ baseUrl: t.baseUrl, clientId: app.id, storage: new MemoryStorage() });
    const url = new URL(await hearth.getAuthorizeUrl({ redirectUri }));
    expect(url.pathname).toBe('/oauth2/authorize');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    // What the server's sign-in page posts, then the redirect back to the client.
    const form = new URLSearchParams(url.searchParams);
    form.set('email', email);
    form.set('password', password);
    const posted = await fetch(new URL('oauth2/authorize', t.baseUrl), {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    expect(posted.status).toBe(302);
    const back = new URL(posted.headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe(url.searchParams.get('state'));
    const forged = await hearth
      .processCode(back.searchParams.get('code') as string, { state: 'forged' })
      .catch((e: unknown) => e);
    expect((forged as OperationOutcomeError).status).toBe(400);
    const profile = await hearth.processCode(back.searchParams.get('code') as string, {
      state: back.searchParams.get('state') as string,
    });
    expect(profile.resourceType).toBe('Practitioner');
    expect(hearth.isAuthenticated()).toBe(true);
    expect(hearth.getProject()?.reference).toBe(`Project/${project.id}`);
    // The default scope asks for offline_access: the session has a refresh token and can be renewed.
    expect(url.searchParams.get('scope')).toBe('openid offline_access');
    const refreshToken = hearth.getActiveLogin()?.refreshToken as string;
    expect(refreshToken).toBeTruthy();
    hearth.setAccessToken('not-a-valid-token', refreshToken);
    expect((await hearth.createResource({ resourceType: 'Patient' })).id).toBeTruthy();
  });

  it('asks for the TOTP code of an enrolled user (auth/mfa/verify)', async () => {
    const admin = await signedInAdmin();
    const projectId = admin.getProject()?.reference?.split('/')[1] as string;
    const email = `mfa-${Date.now()}@example.com`;
    const password = 'sdk mfa user password 1';
    const membership = await admin.invite(projectId, {
      resourceType: 'Practitioner',
      firstName: 'Mfa',
      lastName: 'User',
      email,
      password,
      sendEmail: false,
    });
    expect(membership.resourceType).toBe('ProjectMembership');
    expect(membership.profile?.reference).toMatch(/^Practitioner\//);

    // Enrol through the escape hatches: GET auth/mfa/status, POST auth/mfa/enroll.
    const user = newClient();
    await user.signInWithPassword({ email, password });
    const status = await user.get<{ enrolled: boolean; enrollUri: string }>('auth/mfa/status');
    expect(status.enrolled).toBe(false);
    const secret = new URL(status.enrollUri).searchParams.get('secret') as string;
    await user.post('auth/mfa/enroll', { token: await freshTotp(secret) }, 'application/json');

    const asked: boolean[] = [];
    const again = newClient();
    const noCode = await again.signInWithPassword({ email, password }).catch((e: unknown) => e);
    expect((noCode as OperationOutcomeError).message).toMatch(/second factor/);
    const profile = await again.signInWithPassword(
      { email, password },
      {
        getMfaCode: async ({ enroll }) => {
          asked.push(enroll);
          return freshTotp(secret);
        },
      },
    );
    expect(asked).toEqual([false]);
    expect(`${profile.resourceType}/${profile.id}`).toBe(membership.profile?.reference);
  });

  it('enrols a second factor on the way in when the project requires one (auth/mfa/login-enroll)', async () => {
    const { projectId, email, password } = t.testProject;
    const repo = t.services.systemRepo(projectId);
    const project = (await repo.readResource<Project>('Project', projectId)).resource;
    await repo.updateResource({ ...project, setting: [{ name: 'mfaRequired', valueBoolean: true }] });
    const asked: { enroll: boolean; uri?: string; qr?: string }[] = [];
    const hearth = newClient();
    const profile = await hearth.signInWithPassword(
      { email, password },
      {
        getMfaCode: async ({ enroll, enrollUri, enrollQrCode }) => {
          asked.push({ enroll, uri: enrollUri, qr: enrollQrCode });
          return freshTotp(new URL(enrollUri as string).searchParams.get('secret') as string);
        },
      },
    );
    expect(asked).toHaveLength(1);
    expect(asked[0].enroll).toBe(true);
    expect(asked[0].uri).toMatch(/^otpauth:\/\/totp\//);
    expect(asked[0].qr).toMatch(/^data:image\/png;base64,/);
    expect(profile.id).toBe(t.testProject.profile.id);
  });

  it('renews an expiring token before the requests that need it, one refresh for all of them', async () => {
    const admin = await signedInAdmin();
    const state = admin.getActiveLogin() as LoginState;
    // A session whose token expires in a second (within the grace period): stored as a page reload would find it.
    const storage = new MemoryStorage();
    storage.setItem('activeLogin', JSON.stringify({ ...state, expiresAt: Date.now() + 1000, issuedAt: undefined }));
    const { sent, fetchImpl } = recordingFetch();
    const hearth = newClient({ storage, fetch: fetchImpl });
    const reads = await Promise.all(
      [1, 2, 3, 4, 5].map(() => hearth.search('Patient', { _count: 1 }, { cache: 'no-cache' })),
    );
    expect(reads.every((b) => b.resourceType === 'Bundle')).toBe(true);
    const refreshes = sent.filter((s) => s.grant === 'refresh_token');
    expect(refreshes).toHaveLength(1);
    // The refresh came first, and every search went out with the new token.
    expect(sent[0].grant).toBe('refresh_token');
    const searches = sent.filter((s) => s.path.endsWith('/Patient'));
    expect(searches).toHaveLength(5);
    expect(new Set(searches.map((s) => s.token))).toEqual(new Set([hearth.getAccessToken()]));
    expect(hearth.getAccessToken()).not.toBe(state.accessToken);
    expect(JSON.parse(storage.getItem('activeLogin') as string).accessToken).toBe(hearth.getAccessToken());
    expect(hearth.getActiveLogin()?.expiresAt as number).toBeGreaterThan(Date.now() + 60_000);
  });

  it('renews a refused access token with the refresh token and retries', async () => {
    const hearth = await signedInAdmin();
    const refreshToken = hearth.getActiveLogin()?.refreshToken;
    expect(refreshToken).toBeTruthy();
    hearth.setAccessToken('not-a-valid-token', refreshToken);
    const patient = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'Refreshed' }] });
    expect(patient.id).toBeTruthy();
    expect(hearth.getAccessToken()).not.toBe('not-a-valid-token');
  });

  it('ends the session and calls onUnauthenticated when the token is refused and cannot be renewed', async () => {
    let told = 0;
    const hearth = newClient({ onUnauthenticated: () => told++ });
    const events: string[] = [];
    hearth.addEventListener('unauthenticated', () => events.push('unauthenticated'));
    hearth.setAccessToken('not-a-valid-token');
    const err = await hearth.readResource('Patient', 'x').catch((e: unknown) => e);
    expect((err as OperationOutcomeError).status).toBe(401);
    expect(told).toBe(1);
    expect(events).toEqual(['unauthenticated']);
    expect(hearth.getAccessToken()).toBeUndefined();
  });

  it('uses a token from elsewhere (setAccessToken), reading its expiry from the JWT', async () => {
    const admin = await signedInAdmin();
    const hearth = newClient();
    hearth.setAccessToken(admin.getAccessToken() as string);
    expect(hearth.getActiveLogin()?.expiresAt).toBeGreaterThan(Date.now());
    expect((await hearth.getProfileAsync())?.resourceType).toBe('Practitioner');
  });

  it('signs in with client credentials of a client made through the admin API', async () => {
    const admin = await signedInAdmin();
    const projectId = admin.getProject()?.reference?.split('/')[1] as string;
    const app = await admin.createClient(projectId, { name: 'SDK test client' });
    expect(app.secret).toBeTruthy();
    const machine = newClient();
    const profile = await machine.signInWithClientCredentials(app.id as string, app.secret as string);
    expect(profile.resourceType).toBe('ClientApplication');
    const patient = await machine.createResource({ resourceType: 'Patient', name: [{ family: 'Machine' }] });
    expect(patient.id).toBeTruthy();
    const wrong = await newClient()
      .signInWithClientCredentials(app.id as string, 'wrong-secret')
      .catch((e: unknown) => e);
    expect([400, 401]).toContain((wrong as OperationOutcomeError).status);
  });

  it('signs out: the server revokes the session and the client forgets it', async () => {
    const hearth = await signedInAdmin();
    const token = hearth.getAccessToken() as string;
    await hearth.signOut();
    expect(hearth.isAuthenticated()).toBe(false);
    expect(hearth.getAccessToken()).toBeUndefined();
    const other = newClient();
    other.setAccessToken(token);
    const err = await other.readResource('Patient', 'x').catch((e: unknown) => e);
    expect((err as OperationOutcomeError).status).toBe(401);
  });
});
