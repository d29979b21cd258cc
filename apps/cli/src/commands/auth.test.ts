/**
 * The built CLI against a running server: sign-in (client credentials, email and password with
 * a second factor, the browser flow through its loopback callback), environment sessions,
 * profiles, whoami, logout.
 */
import { statSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '@hearth/core';
import { createProject, createUser } from '../../../server/src/auth/projects.js';
import { createTestApp, getFreePort, type TestApp } from '../../../server/src/test/app.js';
import { ensureCliBuilt, runCli, startCli, tempHome, waitForStderr } from '../test/cli.test-util.js';
import { freshTotp } from '../../../server/src/test/totp.js';

let t: TestApp;
let home: ReturnType<typeof tempHome>;

beforeAll(async () => {
  await ensureCliBuilt();
  t = await createTestApp({ listen: true });
  home = tempHome();
});
afterAll(async () => {
  await t?.close();
  home?.remove();
});

const hearth = (args: string[], env: Record<string, string | undefined> = {}, input?: string) =>
  runCli(args, { home: home.home, env: { HEARTH_BASE_URL: t.baseUrl, ...env }, input });

function profileFile(name: string): string {
  return join(home.home, '.hearth', 'profiles', `${name}.json`);
}

describe('hearth login', () => {
  it('needs a session for commands that call the server', async () => {
    const result = await hearth(['whoami', '--profile', 'nobody']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Not signed in');
  });

  it('signs in with client credentials and stores the session with mode 0600', async () => {
    const { client } = t.testProject;
    const login = await hearth([
      'login',
      '--profile',
      'machine',
      '--client-id',
      client.id as string,
      '--client-secret',
      client.secret as string,
    ]);
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`ClientApplication/${client.id}`);
    const file = profileFile('machine');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home.home, '.hearth')).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.authMethod).toBe('client-credentials');
    expect(Object.values(stored.logins as Record<string, { accessToken: string }>)[0].accessToken).toBeTruthy();

    const whoami = await hearth(['whoami', '--profile', 'machine']);
    expect(whoami.code).toBe(0);
    expect(whoami.stdout).toContain(`ClientApplication/${client.id}`);
    expect(whoami.stdout).toContain(`Project/${t.testProject.projectId}`);
  });

  it('signs in with email and password (the /auth flow) and acts as the profile', async () => {
    const { email, password, projectId } = t.testProject;
    const login = await hearth(['login', '--email', email, '--password', password]);
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Project/${projectId}`);
    const whoami = await hearth(['whoami', '--json']);
    expect(whoami.code).toBe(0);
    const me = JSON.parse(whoami.stdout);
    expect(me.user.email).toBe(email);
    expect(me.project.id).toBe(projectId);
    expect(statSync(profileFile('default')).mode & 0o777).toBe(0o600);
  });

  it('takes the password from HEARTH_PASSWORD and explains a wrong one', async () => {
    const { email, password } = t.testProject;
    const ok = await hearth(['login', '--profile', 'scripted', '--email', email], { HEARTH_PASSWORD: password });
    expect(ok.code).toBe(0);
    const wrong = await hearth([
      'login',
      '--profile',
      'scripted2',
      '--email',
      email,
      '--password',
      'not-the-password-1',
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/Email or password is invalid/);
    expect(existsSync(profileFile('scripted2'))).toBe(false);
  });

  it('signs in through the browser flow: authorize URL, the form post, the redirect to the loopback callback', async () => {
    const port = await getFreePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const created = await hearth([
      'post',
      'ClientApplication',
      JSON.stringify({ resourceType: 'ClientApplication', name: 'CLI browser client', redirectUris: [redirectUri] }),
    ]);
    expect(created.code).toBe(0);
    const clientId = JSON.parse(created.stdout).id as string;

    const child = startCli(
      ['login', '--profile', 'browser', '--client-id', clientId, '--port', String(port), '--no-browser'],
      {
        home: home.home,
        env: { HEARTH_BASE_URL: t.baseUrl },
      },
    );
    const [, url] = await waitForStderr(child, /(http:\/\/\S+\/oauth2\/authorize\?\S+)/);
    const authorize = new URL(url);
    expect(authorize.searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    // What the sign-in page's form posts (the server's non-interactive path): the request plus the credentials.
    const form = new URLSearchParams(authorize.searchParams);
    form.set('email', t.testProject.email);
    form.set('password', t.testProject.password);
    const posted = await fetch(new URL('oauth2/authorize', t.baseUrl), {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    expect(posted.status).toBe(302);
    const location = posted.headers.get('location') as string;
    expect(location.startsWith(redirectUri)).toBe(true);
    // A redirect with another state is not this sign-in's: refused, and the CLI keeps waiting.
    const forged = new URL(location);
    forged.searchParams.set('state', 'forged');
    expect((await fetch(forged)).status).toBe(400);
    const callback = await fetch(location);
    expect(callback.status).toBe(200);
    expect(await callback.text()).toContain('Signed in');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(child.output.stderr).not.toContain('Error');
    expect(code).toBe(0);
    const whoami = await hearth(['whoami', '--profile', 'browser', '--json']);
    expect(JSON.parse(whoami.stdout).user.email).toBe(t.testProject.email);
    // offline_access by default: the stored login can be renewed when its access token expires.
    expect(authorize.searchParams.get('scope')).toBe('openid offline_access');
    const stored = JSON.parse(readFileSync(profileFile('browser'), 'utf8'));
    expect(stored.logins[stored.activeProject].refreshToken).toBeTruthy();
  });

  it('explains that the browser flow needs a client', async () => {
    const result = await hearth(['login', '--profile', 'noclient', '--no-browser']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--client-id');
  });
});

describe('hearth login with a second factor', () => {
  it('shows the key to enrol, enrols with --mfa-code, then asks for the code at each sign-in', async () => {
    const deps = t.services.auth.deps;
    const email = `cli-mfa-${Date.now()}@example.com`;
    const password = 'cli mfa password 1234';
    const user = await createUser(deps, { firstName: 'Tess', lastName: 'Totp', email, password });
    await createProject(deps, { name: 'MFA CLI Project', owner: user });
    const repo = t.services.systemRepo();
    const current = (await repo.readResource<User>('User', user.id as string)).resource;
    await repo.updateResource({ ...current, mfaRequired: true });
    const login = (env: Record<string, string> = {}, ...extra: string[]) =>
      hearth(['login', '--profile', 'mfa', '--email', email, '--password', password, ...extra], env);

    const first = await login();
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('must set up a second factor');
    const uri = first.stderr.match(/otpauth:\/\/\S+/)?.[0] as string;
    const secret = new URL(uri).searchParams.get('secret') as string;
    expect(secret).toBeTruthy();
    expect(existsSync(profileFile('mfa'))).toBe(false);

    const enrolled = await login({}, '--mfa-code', await freshTotp(secret));
    expect(enrolled.stderr).toBe('');
    expect(enrolled.code).toBe(0);
    expect(enrolled.stdout).toContain('Tess Totp');

    const noCode = await login();
    expect(noCode.code).toBe(1);
    expect(noCode.stderr).toContain('pass the authenticator code with --mfa-code or HEARTH_MFA_CODE');
    const wrong = await login({}, '--mfa-code', '000000');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('Invalid MFA token');
    const fromEnv = await login({ HEARTH_MFA_CODE: await freshTotp(secret) });
    expect(fromEnv.code).toBe(0);
    const me = JSON.parse((await hearth(['whoami', '--json', '--profile', 'mfa'])).stdout);
    expect(me.user.email).toBe(email);
  });
});

describe('hearth profile', () => {
  it('lists, shows and removes profiles, never printing tokens or secrets', async () => {
    const { client, email, password, projectId } = t.testProject;
    const env = { HEARTH_PASSWORD: password };
    expect((await hearth(['login', '--profile', 'p-one', '--email', email, '--project', projectId], env)).code).toBe(0);
    const machine = await hearth([
      'login',
      '--profile',
      'p-two',
      '--client-id',
      client.id as string,
      '--client-secret',
      client.secret as string,
    ]);
    expect(machine.code).toBe(0);

    const list = await hearth(['profile', 'list', '--profile', 'p-two']);
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n').slice(2);
    expect(rows.find((r) => r.includes('p-one'))).toMatch(/^\s+p-one\s+\S+\s+password\s+Test Project/);
    expect(rows.find((r) => r.includes('p-two'))).toMatch(/^\*\s+p-two\s+\S+\s+client-credentials/);
    const json = JSON.parse((await hearth(['profile', 'list', '--json'])).stdout) as { name: string }[];
    expect(json.map((p) => p.name)).toEqual(expect.arrayContaining(['p-one', 'p-two']));

    const shown = await hearth(['profile', 'show', 'p-two']);
    expect(shown.code).toBe(0);
    const detail = JSON.parse(shown.stdout);
    expect(detail).toMatchObject({ name: 'p-two', authMethod: 'client-credentials', signedIn: true });
    expect(detail.file).toBe(profileFile('p-two'));
    const printed = list.stdout + shown.stdout + JSON.stringify(json);
    expect(printed).not.toContain(client.secret as string);
    const stored = JSON.parse(readFileSync(profileFile('p-two'), 'utf8'));
    for (const login of Object.values(stored.logins as Record<string, { accessToken: string }>)) {
      expect(printed).not.toContain(login.accessToken);
    }

    const removed = await hearth(['profile', 'remove', 'p-two']);
    expect(removed.code).toBe(0);
    expect(existsSync(profileFile('p-two'))).toBe(false);
    const missing = await hearth(['profile', 'show', 'p-two']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No profile 'p-two'; the profiles are:");
  });
});

describe('sessions from the environment', () => {
  it('uses HEARTH_ACCESS_TOKEN without a stored login', async () => {
    const result = await hearth(['whoami', '--profile', 'none'], { HEARTH_ACCESS_TOKEN: t.token });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('HEARTH_ACCESS_TOKEN');
    expect(result.stdout).toContain(`Project/${t.testProject.projectId}`);
    expect(existsSync(profileFile('none'))).toBe(false);
  });

  it('uses HEARTH_CLIENT_ID and HEARTH_CLIENT_SECRET without a stored login', async () => {
    const { client } = t.testProject;
    const result = await hearth(['get', 'Patient?_count=1', '--profile', 'none'], {
      HEARTH_CLIENT_ID: client.id,
      HEARTH_CLIENT_SECRET: client.secret,
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).resourceType).toBe('Bundle');
    expect(existsSync(profileFile('none'))).toBe(false);
  });

  it('says when the token is refused', async () => {
    const result = await hearth(['get', 'Patient'], { HEARTH_ACCESS_TOKEN: 'not-a-token' });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr).resourceType).toBe('OperationOutcome');
  });
});

describe('concurrent runs of one profile', () => {
  it('renew an expiring session once: the others take the renewed tokens instead of reusing the old refresh token', async () => {
    const { email, password, projectId } = t.testProject;
    const login = await hearth(['login', '--profile', 'shared', '--email', email, '--project', projectId], {
      HEARTH_PASSWORD: password,
    });
    expect(login.code).toBe(0);
    const file = profileFile('shared');
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    const key = stored.activeProject as string;
    const before = stored.logins[key];
    expect(before.refreshToken).toBeTruthy();
    // The access token is about to expire: every run renews before its request. An hour-old issue
    // time makes the renewal margin the client's full grace period, however fast the runs start.
    stored.logins[key] = { ...before, issuedAt: Date.now() - 3_600_000, expiresAt: Date.now() + 1000 };
    writeFileSync(file, JSON.stringify(stored));
    const runs = await Promise.all(
      [1, 2, 3, 4].map(() => hearth(['search', 'Patient', '_count=1', '--json', '--profile', 'shared'])),
    );
    for (const run of runs) {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    const after = JSON.parse(readFileSync(file, 'utf8')).logins[key];
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() + 60_000);
    const whoami = await hearth(['whoami', '--profile', 'shared']);
    expect(whoami.code).toBe(0);
  });
});

describe('hearth logout', () => {
  it('signs out: the server revokes the session and the profile forgets it', async () => {
    const { email, password } = t.testProject;
    expect((await hearth(['login', '--profile', 'temp', '--email', email, '--password', password])).code).toBe(0);
    const stored = JSON.parse(readFileSync(profileFile('temp'), 'utf8'));
    const token = Object.values(stored.logins as Record<string, { accessToken: string }>)[0].accessToken;
    const out = await hearth(['logout', '--profile', 'temp']);
    expect(out.code).toBe(0);
    expect((await hearth(['whoami', '--profile', 'temp'])).code).toBe(1);
    // The old token no longer works on the server.
    const refused = await hearth(['get', 'Patient'], { HEARTH_ACCESS_TOKEN: token });
    expect(refused.code).toBe(1);
    const all = await hearth(['logout', '--profile', 'temp', '--all']);
    expect(all.code).toBe(0);
    expect(existsSync(profileFile('temp'))).toBe(false);
  });
});

describe('hearth project', () => {
  let second: string;

  beforeAll(async () => {
    const created = await createProject(t.services.auth.deps, {
      name: 'Second CLI Project',
      owner: t.testProject.user,
    });
    second = created.project.id as string;
  });

  it('asks which project when the user has several, and keeps one login per project', async () => {
    const { email, password, projectId } = t.testProject;
    const ambiguous = await hearth(['login', '--profile', 'multi', '--email', email, '--password', password]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('choose one with --project <id>');
    expect(ambiguous.stderr).toContain(second);

    expect(
      (await hearth(['login', '--profile', 'multi', '--email', email, '--password', password, '--project', projectId]))
        .code,
    ).toBe(0);
    expect(
      (await hearth(['login', '--profile', 'multi', '--email', email, '--password', password, '--project', second]))
        .code,
    ).toBe(0);

    const list = await hearth(['project', 'list', '--profile', 'multi']);
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n').slice(2);
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.includes(second))).toMatch(/^\*\s+\S+\s+Second CLI Project/);
    expect(rows.find((r) => r.includes(projectId))).toMatch(/^\s+\S+\s+Test Project/);

    const switched = await hearth(['project', 'switch', projectId, '--profile', 'multi']);
    expect(switched.code).toBe(0);
    expect(switched.stdout).toContain(`Switched to project Test Project (Project/${projectId})`);
    const me = JSON.parse((await hearth(['whoami', '--json', '--profile', 'multi'])).stdout);
    expect(me.project.id).toBe(projectId);
    const json = JSON.parse((await hearth(['project', 'list', '--json', '--profile', 'multi'])).stdout);
    expect(json.find((r: { id: string }) => r.id === projectId).active).toBe(true);

    const unknown = await hearth(['project', 'switch', 'no-such-project', '--profile', 'multi']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('hearth login --project no-such-project');
  });

  it('invites a user into the current project, who can then sign in', async () => {
    const { email, password } = t.testProject;
    await hearth([
      'login',
      '--profile',
      'admin',
      '--email',
      email,
      '--password',
      password,
      '--project',
      t.testProject.projectId,
    ]);
    const invited = `invited-${Date.now()}@example.com`;
    const result = await hearth([
      'project',
      'invite',
      invited,
      '--first-name',
      'Ivy',
      '--last-name',
      'Invited',
      '--password',
      'invited-password-1234',
      '--profile',
      'admin',
    ]);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    const membership = JSON.parse(result.stdout);
    expect(membership.resourceType).toBe('ProjectMembership');
    expect(membership.profile.reference).toMatch(/^Practitioner\//);

    const show = await hearth(['project', 'show', '--profile', 'admin']);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('Test Project');
    expect(show.stdout).toContain(membership.id);

    const login = await hearth([
      'login',
      '--profile',
      'ivy',
      '--email',
      invited,
      '--password',
      'invited-password-1234',
    ]);
    expect(login.code).toBe(0);
    expect(login.stdout).toContain('Ivy Invited');
  });
});
