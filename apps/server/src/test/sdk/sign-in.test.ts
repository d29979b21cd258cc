/**
 * The SDK's sign-in flows against a real server: email and password with PKCE, token refresh
 * after a refused token, client credentials, sign-out. Skipped while the server has no /auth/login.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthClient, MemoryStorage, OperationOutcomeError, type ClientApplication } from '@hearth/core';
import { createTestApp, type TestApp } from '../app.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, authConfig, hasSignIn } from './server.test-util.js';

let t: TestApp;
let signIn = false;

beforeAll(async () => {
  t = await createTestApp({ listen: true, config: authConfig() });
  signIn = await hasSignIn(t.baseUrl);
});
afterAll(async () => {
  await t?.close();
});

function newClient(onUnauthenticated?: () => void): HearthClient {
  return new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0, onUnauthenticated });
}

describe('HearthClient sign-in against a server', () => {
  it('signs in with email and password (PKCE S256) and acts as its profile', async (ctx) => {
    if (!signIn) {
      ctx.skip();
    }
    const hearth = newClient();
    const profile = await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    expect(['Practitioner', 'Patient', 'RelatedPerson']).toContain(profile.resourceType);
    expect(hearth.isAuthenticated()).toBe(true);
    expect(hearth.getActiveLogin()?.accessToken).toBeTruthy();
    const details = await hearth.getSessionDetails();
    expect(details?.project?.resourceType).toBe('Project');
    const patient = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'SignedIn' }] });
    expect((await hearth.readResource('Patient', patient.id as string)).id).toBe(patient.id);
  });

  it('rejects a wrong password with the server outcome', async (ctx) => {
    if (!signIn) {
      ctx.skip();
    }
    const hearth = newClient();
    const err = await hearth
      .signInWithPassword({ email: ADMIN_EMAIL, password: 'wrong-password-123' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    expect([400, 401]).toContain((err as OperationOutcomeError).status);
    expect(hearth.isAuthenticated()).toBe(false);
  });

  it('renews a refused access token with the refresh token and retries', async (ctx) => {
    if (!signIn) {
      ctx.skip();
    }
    const hearth = newClient();
    await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const refreshToken = hearth.getActiveLogin()?.refreshToken;
    expect(refreshToken).toBeTruthy();
    hearth.setAccessToken('not-a-valid-token', refreshToken);
    const patient = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'Refreshed' }] });
    expect(patient.id).toBeTruthy();
    expect(hearth.getAccessToken()).not.toBe('not-a-valid-token');
  });

  it('ends the session when the token is refused and cannot be renewed', async (ctx) => {
    if (!signIn) {
      ctx.skip();
    }
    let told = 0;
    const hearth = newClient(() => told++);
    hearth.setAccessToken('not-a-valid-token');
    const err = await hearth.readResource('Patient', 'x').catch((e: unknown) => e);
    expect((err as OperationOutcomeError).status).toBe(401);
    expect(told).toBe(1);
    expect(hearth.getAccessToken()).toBeUndefined();
  });

  it('signs in with client credentials of a client made through the admin API', async (ctx) => {
    if (!signIn) {
      ctx.skip();
    }
    const admin = newClient();
    await admin.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const projectId = admin.getProject()?.reference?.split('/')[1] as string;
    let app: ClientApplication;
    try {
      app = await admin.createClient(projectId, { name: 'SDK test client' });
    } catch (err) {
      if (!(err instanceof OperationOutcomeError && err.status === 404)) {
        throw err;
      }
      // No /admin endpoints on this server yet: make the client and its membership as FHIR resources.
      app = await admin.createResource<ClientApplication>({
        resourceType: 'ClientApplication',
        name: 'SDK test client',
        secret: `secret-${Date.now()}-abcdefghijklmnopqrstuvwxyz`,
      });
      await admin.createResource({
        resourceType: 'ProjectMembership',
        project: { reference: `Project/${projectId}` },
        user: { reference: `ClientApplication/${app.id}` },
        profile: { reference: `ClientApplication/${app.id}` },
      });
    }
    expect(app.secret).toBeTruthy();
    const machine = newClient();
    const profile = await machine.signInWithClientCredentials(app.id as string, app.secret as string);
    expect(profile.resourceType).toBe('ClientApplication');
    const patient = await machine.createResource({ resourceType: 'Patient', name: [{ family: 'Machine' }] });
    expect(patient.id).toBeTruthy();
  });

  it('signs out', async (ctx) => {
    if (!signIn) {
      ctx.skip();
    }
    const hearth = newClient();
    await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await hearth.signOut();
    expect(hearth.isAuthenticated()).toBe(false);
    expect(hearth.getAccessToken()).toBeUndefined();
  });
});
