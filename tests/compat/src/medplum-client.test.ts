/**
 * Wire compatibility with the platform the spec describes: its published TypeScript client
 * (@medplum/core, a devDependency of this test package only) signs in with email and password
 * through /auth/login and /oauth2/token, then creates, reads, searches and updates resources
 * against a Hearth server listening on a real port.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientStorage, MedplumClient, MemoryStorage, type MedplumClientOptions } from '@medplum/core';
import { createTestApp, type TestApp } from '../../../apps/server/src/test/app.js';

let t: TestApp;

/**
 * The client keeps its PKCE verifier in sessionStorage, which Node does not have: the client's own
 * in-memory one. (In Node it cannot hash the verifier, since it encodes with window.btoa, so its
 * own challenges use the plain method; the S256 test hands it a challenge.)
 */
function installSessionStorage(): void {
  const g = globalThis as { sessionStorage?: unknown };
  g.sessionStorage ??= new MemoryStorage();
}

/** Where the client keeps its PKCE verifier (the store installed above). */
function sessionStore(): MemoryStorage {
  return (globalThis as unknown as { sessionStorage: MemoryStorage }).sessionStorage;
}

function client(options: Partial<MedplumClientOptions> = {}): MedplumClient {
  return new MedplumClient({
    baseUrl: t.baseUrl,
    storage: new ClientStorage(new MemoryStorage()),
    fetch: globalThis.fetch.bind(globalThis),
    ...options,
  });
}

beforeAll(async () => {
  installSessionStorage();
  t = await createTestApp({ listen: true });
});
afterAll(async () => {
  await t?.close();
});

describe('@medplum/core 4.5.2 against Hearth', () => {
  it('signs in with email and password (startLogin + processCode) and reads its profile', async () => {
    const medplum = client();
    const login = await medplum.startLogin({ email: t.testProject.email, password: t.testProject.password });
    expect(login.login).toBeTruthy();
    expect(login.code).toBeTruthy();
    const profile = await medplum.processCode(login.code as string);
    expect(profile?.resourceType).toBe('Practitioner');
    expect(medplum.isAuthenticated()).toBe(true);
    expect(medplum.getProject()?.id).toBe(t.testProject.projectId);
    expect(medplum.getProjectMembership()?.admin).toBe(true);
    expect(medplum.getActiveLogin()?.refreshToken).toBeTruthy();
  });

  it('signs in with an S256 challenge, the verifier redeemed by processCode from sessionStorage', async () => {
    const medplum = client();
    const verifier = randomBytes(48).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    // processCode sends the verifier the client keeps under this key.
    sessionStore().setItem('codeVerifier', verifier);
    const login = await medplum.startLogin({
      email: t.testProject.email,
      password: t.testProject.password,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
    });
    const profile = await medplum.processCode(login.code as string);
    expect(profile?.resourceType).toBe('Practitioner');

    // The wrong verifier is refused: the server checked the S256 challenge.
    sessionStore().setItem('codeVerifier', randomBytes(48).toString('base64url'));
    const again = await client().startLogin({
      email: t.testProject.email,
      password: t.testProject.password,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
    });
    await expect(client().processCode(again.code as string)).rejects.toThrow('Failed to fetch tokens');
    sessionStore().removeItem('codeVerifier');
  });

  it('creates, reads, searches and updates resources', async () => {
    const medplum = client();
    const login = await medplum.startLogin({ email: t.testProject.email, password: t.testProject.password });
    await medplum.processCode(login.code as string);

    const patient = await medplum.createResource({
      resourceType: 'Patient',
      name: [{ given: ['Grace'], family: 'Hopper' }],
      birthDate: '1906-12-09',
    });
    expect(patient.id).toBeTruthy();
    expect((patient as { meta?: { versionId?: string } }).meta?.versionId).toBe('1');

    const read = await medplum.readResource('Patient', patient.id as string);
    expect(read.name?.[0]?.family).toBe('Hopper');

    const obs = await medplum.createResource({
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' }] },
      subject: { reference: `Patient/${patient.id}` },
      valueQuantity: { value: 72, unit: '/min' },
    });

    const found = await medplum.searchResources('Patient', { family: 'Hopper' });
    expect(found.map((p: { id?: string }) => p.id)).toContain(patient.id);
    const bundle = await medplum.search('Observation', `subject=Patient/${patient.id}&_include=Observation:subject`);
    expect(bundle.entry?.map((e: { resource?: { resourceType: string } }) => e.resource?.resourceType).sort()).toEqual([
      'Observation',
      'Patient',
    ]);
    const one = await medplum.searchOne('Observation', {
      code: 'http://loinc.org|8867-4',
      subject: `Patient/${patient.id}`,
    });
    expect(one?.id).toBe(obs.id);

    const updated = await medplum.updateResource({ ...read, gender: 'female' });
    expect(updated.gender).toBe('female');
    expect(updated.meta?.versionId).toBe('2');
    const history = await medplum.readHistory('Patient', patient.id as string);
    expect(history.entry?.length).toBe(2);

    const patched = await medplum.patchResource('Patient', patient.id as string, [
      { op: 'add', path: '/active', value: true },
    ]);
    expect(patched.active).toBe(true);

    await medplum.deleteResource('Observation', obs.id as string);
    await expect(medplum.readResource('Observation', obs.id as string)).rejects.toThrow();
  });

  it('surfaces a wrong password as an error', async () => {
    const medplum = client();
    await expect(medplum.startLogin({ email: t.testProject.email, password: 'not the password' })).rejects.toThrow(
      /invalid/i,
    );
  });

  it('signs in with client credentials of a client made through the admin API', async () => {
    const admin = client();
    const login = await admin.startLogin({ email: t.testProject.email, password: t.testProject.password });
    await admin.processCode(login.code as string);
    const created = await admin.post(`admin/projects/${t.testProject.projectId}/client`, {
      name: 'Medplum SDK client',
    });
    const medplum = client();
    const profile = await medplum.startClientLogin(created.id, created.secret);
    expect(profile.resourceType).toBe('ClientApplication');
    const patients = await medplum.searchResources('Patient', { _count: '1' });
    expect(Array.isArray(patients)).toBe(true);
  });

  it('refreshes an expired access token with its refresh token', async () => {
    const medplum = client();
    const login = await medplum.startLogin({ email: t.testProject.email, password: t.testProject.password });
    await medplum.processCode(login.code as string);
    const before = medplum.getAccessToken();
    // Force the refresh path the client takes when its token is about to expire.
    await medplum.refreshIfExpired(2 * 3600 * 1000);
    expect(medplum.getAccessToken()).not.toBe(before);
    const me = await medplum.get('auth/me');
    expect(me.project.id).toBe(t.testProject.projectId);
  });

  it('signs out (the server revokes the login)', async () => {
    const medplum = client();
    const login = await medplum.startLogin({ email: t.testProject.email, password: t.testProject.password });
    await medplum.processCode(login.code as string);
    const token = medplum.getAccessToken() as string;
    await medplum.signOut();
    const res = await fetch(`${t.baseUrl}auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(401);
  });
});
