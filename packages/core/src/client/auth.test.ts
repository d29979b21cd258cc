import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { OperationOutcomeError } from '../outcome.js';
import { HearthClient } from './client.js';
import { MemoryStorage } from './storage.js';
import { json, MockFetch, outcome, type RecordedRequest } from './mock-fetch.test-util.js';
import type { HearthClientOptions } from './types.js';

const BASE = 'http://hearth.test/';
const practitioner = { resourceType: 'Practitioner', id: 'pr1', name: [{ given: ['Ada'], family: 'Lovelace' }] };

function jwt(payload: object): string {
  return ['{"alg":"none"}', JSON.stringify(payload)].map((p) => Buffer.from(p).toString('base64url')).join('.') + '.s';
}

function form(req: RecordedRequest): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(req.body));
}

/** A mock of the sign-in endpoints: /auth/login, /auth/profile, /auth/mfa/verify, /oauth2/token, /auth/me. */
function authServer(options: { memberships?: boolean; mfa?: boolean; expiresIn?: number } = {}) {
  const mock = new MockFetch();
  const challenges = new Map<string, string>();
  let tokens = 0;
  const issue = (refresh = true) => {
    tokens++;
    return json({
      token_type: 'Bearer',
      access_token: `access-${tokens}`,
      refresh_token: refresh ? `refresh-${tokens}` : undefined,
      expires_in: options.expiresIn ?? 3600,
      project: { reference: 'Project/proj1' },
      profile: { reference: 'Practitioner/pr1' },
    });
  };
  mock.on('POST', '/auth/login', (req) => {
    const body = JSON.parse(req.body);
    if (body.password !== 'secret') {
      return outcome('bad-request', 400, 'Email or password is invalid');
    }
    challenges.set('code-1', body.codeChallenge);
    if (options.mfa) {
      return json({ login: 'login-1', mfaRequired: true });
    }
    if (options.memberships) {
      return json({
        login: 'login-1',
        memberships: [
          { resourceType: 'ProjectMembership', id: 'm1', project: { reference: 'Project/a', display: 'A' } },
          { resourceType: 'ProjectMembership', id: 'm2', project: { reference: 'Project/b', display: 'B' } },
        ],
      });
    }
    return json({ login: 'login-1', code: 'code-1' });
  });
  mock.on('POST', '/auth/profile', (req) => json({ login: JSON.parse(req.body).login, code: 'code-1' }));
  mock.on('POST', '/auth/mfa/verify', (req) =>
    JSON.parse(req.body).token === '123456'
      ? json({ login: 'login-1', code: 'code-1' })
      : outcome('bad-request', 400, 'Invalid code'),
  );
  mock.on('POST', '/oauth2/token', (req) => {
    const f = form(req);
    if (f.grant_type === 'authorization_code') {
      const challenge = challenges.get(f.code);
      const computed = createHash('sha256')
        .update(f.code_verifier ?? '')
        .digest('base64url');
      if (!challenge || challenge !== computed) {
        return json({ error: 'invalid_grant', error_description: 'PKCE verification failed' }, 400);
      }
      return issue();
    }
    if (f.grant_type === 'refresh_token') {
      return f.refresh_token === `refresh-${tokens}`
        ? issue()
        : json({ error: 'invalid_grant', error_description: 'Invalid refresh token' }, 400);
    }
    if (f.grant_type === 'client_credentials') {
      return f.client_secret === 'shh'
        ? issue(false)
        : json({ error: 'invalid_client', error_description: 'Invalid secret' }, 401);
    }
    return json({ error: 'unsupported_grant_type', error_description: 'no' }, 400);
  });
  mock.on('GET', '/auth/me', () => json({ profile: practitioner, project: { resourceType: 'Project', id: 'proj1' } }));
  mock.on('POST', '/oauth2/logout', () => json({}));
  return mock;
}

function client(mock: MockFetch, options: Partial<HearthClientOptions> = {}) {
  return new HearthClient({ baseUrl: BASE, fetch: mock.fetch, storage: new MemoryStorage(), cacheTime: 0, ...options });
}

describe('signInWithPassword', () => {
  it('signs in with an S256 PKCE challenge whose verifier is sent to the token endpoint', async () => {
    const mock = authServer();
    const hearth = client(mock, { clientId: 'app1' });
    const profile = await hearth.signInWithPassword({ email: 'ada@example.com', password: 'secret' });
    expect(profile).toEqual(practitioner);
    const login = JSON.parse(mock.to('POST', '/auth/login')[0].body);
    expect(login).toMatchObject({ email: 'ada@example.com', clientId: 'app1', codeChallengeMethod: 'S256' });
    const token = form(mock.to('POST', '/oauth2/token')[0]);
    expect(token.code_verifier).toMatch(/^[A-Za-z0-9\-._~]{43,128}$/);
    expect(createHash('sha256').update(token.code_verifier).digest('base64url')).toBe(login.codeChallenge);
    expect(mock.to('POST', '/oauth2/token')[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(hearth.getAccessToken()).toBe('access-1');
    expect(hearth.isAuthenticated()).toBe(true);
    expect(hearth.getProfile()).toEqual(practitioner);
    expect(hearth.getProject()).toEqual({ reference: 'Project/proj1' });
  });

  it('asks which membership to use when there are several', async () => {
    const mock = authServer({ memberships: true });
    const hearth = client(mock);
    const choose = vi.fn((ms: { id?: string }[]) => ms[1].id as string);
    await hearth.signInWithPassword({ email: 'a@b.c', password: 'secret' }, { chooseMembership: choose });
    expect(choose).toHaveBeenCalledOnce();
    expect(JSON.parse(mock.to('POST', '/auth/profile')[0].body)).toEqual({ login: 'login-1', profile: 'm2' });
    expect(hearth.getAccessToken()).toBe('access-1');
  });

  it('fails with the memberships named when no chooser is given', async () => {
    const hearth = client(authServer({ memberships: true }));
    await expect(hearth.signInWithPassword({ email: 'a@b.c', password: 'secret' })).rejects.toThrow(
      /m1 \(A\), m2 \(B\)/,
    );
    expect(hearth.isAuthenticated()).toBe(false);
  });

  it('asks for the second factor when it is due', async () => {
    const mock = authServer({ mfa: true });
    const hearth = client(mock);
    await expect(hearth.signInWithPassword({ email: 'a@b.c', password: 'secret' })).rejects.toThrow(/getMfaCode/);
    await hearth.signInWithPassword({ email: 'a@b.c', password: 'secret' }, { getMfaCode: () => '123456' });
    expect(JSON.parse(mock.to('POST', '/auth/mfa/verify')[0].body)).toEqual({ login: 'login-1', token: '123456' });
    expect(hearth.isAuthenticated()).toBe(true);
  });

  it('rejects with the server outcome on a wrong password', async () => {
    const hearth = client(authServer());
    const err = await hearth.signInWithPassword({ email: 'a@b.c', password: 'nope' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    expect((err as OperationOutcomeError).message).toBe('Email or password is invalid');
  });
});

describe('redirect sign-in', () => {
  it('builds the authorize URL with PKCE and state, and processCode uses what it stored', async () => {
    const mock = authServer();
    const storage = new MemoryStorage();
    const hearth = client(mock, { clientId: 'app1', storage });
    const url = new URL(await hearth.getAuthorizeUrl({ redirectUri: 'http://app.test/cb', scope: 'openid profile' }));
    expect(url.origin + url.pathname).toBe('http://hearth.test/oauth2/authorize');
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({
      response_type: 'code',
      client_id: 'app1',
      redirect_uri: 'http://app.test/cb',
      scope: 'openid profile',
      code_challenge_method: 'S256',
    });
    expect(q.state).toMatch(/^[\w-]{16,}$/);
    // The page after the redirect (another client on the same storage) checks the state first.
    const after = client(mock, { clientId: 'app1', storage });
    await expect(after.processCode('code-x', { state: 'wrong' })).rejects.toThrow(/state/);
    expect(mock.to('POST', '/oauth2/token')).toHaveLength(0);
  });

  it('exchanges the code with the stored verifier and redirect URI', async () => {
    const mock = authServer();
    const storage = new MemoryStorage();
    const hearth = client(mock, { clientId: 'app1', storage });
    const url = new URL(await hearth.getAuthorizeUrl({ redirectUri: 'http://app.test/cb' }));
    const challenge = url.searchParams.get('code_challenge');
    mock.on('POST', '/oauth2/token', (req) => {
      const f = form(req);
      expect(createHash('sha256').update(f.code_verifier).digest('base64url')).toBe(challenge);
      expect(f).toMatchObject({
        grant_type: 'authorization_code',
        code: 'c1',
        redirect_uri: 'http://app.test/cb',
        client_id: 'app1',
      });
      return json({ token_type: 'Bearer', access_token: 'tok', expires_in: 60 });
    });
    const after = client(mock, { clientId: 'app1', storage });
    const profile = await after.processCode('c1', { state: url.searchParams.get('state') as string });
    expect(profile.id).toBe('pr1');
    expect(storage.getItem('pendingAuthorize')).toBeNull();
    // The session survives in storage for the next client made on it.
    expect(client(mock, { storage }).getAccessToken()).toBe('tok');
  });

  it('needs a redirect URI outside a browser, and signInWithRedirect needs a browser', async () => {
    const hearth = client(authServer());
    await expect(hearth.getAuthorizeUrl()).rejects.toThrow(/redirectUri/);
    await expect(hearth.signInWithRedirect()).rejects.toThrow(/browser/);
  });
});

describe('tokens', () => {
  it('signs in with client credentials and signs in again when the token is about to expire', async () => {
    const mock = authServer({ expiresIn: 60 });
    const hearth = client(mock, { refreshGracePeriod: 120_000 });
    mock.on('GET', '/fhir/R4/Patient/p1', (req) =>
      json({ resourceType: 'Patient', id: 'p1', auth: req.headers.authorization }),
    );
    await hearth.signInWithClientCredentials('client1', 'shh');
    expect(form(mock.to('POST', '/oauth2/token')[0])).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client1',
      client_secret: 'shh',
    });
    // A 60 s token with a 120 s grace period is renewed at half its life, not on every request.
    expect(((await hearth.readResource('Patient', 'p1')) as { auth?: string }).auth).toBe('Bearer access-1');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 35_000);
      // Now it expires soon: renewed, with the credentials again, before the request.
      const p = (await hearth.readResource('Patient', 'p1')) as { auth?: string };
      expect(mock.to('POST', '/oauth2/token')).toHaveLength(2);
      expect(form(mock.to('POST', '/oauth2/token')[1]).grant_type).toBe('client_credentials');
      expect(p.auth).toBe('Bearer access-2');
    } finally {
      vi.useRealTimers();
    }
  });

  it('refreshes an expiring token once, however many requests need it', async () => {
    const mock = authServer();
    const hearth = client(mock);
    await hearth.signInWithPassword({ email: 'a@b.c', password: 'secret' });
    mock.on('GET', /^\/fhir\/R4\/Patient/, (req) => json({ resourceType: 'Patient', auth: req.headers.authorization }));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    mock.on('POST', '/oauth2/token', async (req) => {
      await gate;
      expect(form(req)).toEqual({ grant_type: 'refresh_token', refresh_token: 'refresh-1' });
      return json({ token_type: 'Bearer', access_token: 'access-2', refresh_token: 'refresh-2', expires_in: 3600 });
    });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 3600_000 - 60_000); // one minute before expiry: inside the grace period
      const reads = Promise.all([1, 2, 3, 4, 5].map((i) => hearth.readResource('Patient', `p${i}`)));
      await new Promise((r) => setTimeout(r, 10));
      release();
      const results = await reads;
      expect(results.map((r) => (r as { auth?: string }).auth)).toEqual(Array(5).fill('Bearer access-2'));
      expect(mock.to('POST', '/oauth2/token')).toHaveLength(2); // sign-in + one refresh
      expect(hearth.getActiveLogin()?.refreshToken).toBe('refresh-2');
    } finally {
      vi.useRealTimers();
    }
  });

  it('on 401 refreshes and retries once; when that fails too, ends the session and calls onUnauthenticated', async () => {
    const mock = authServer();
    const onUnauthenticated = vi.fn();
    const hearth = client(mock, { onUnauthenticated });
    await hearth.signInWithPassword({ email: 'a@b.c', password: 'secret' });
    let accept = 'Bearer access-2';
    mock.on('GET', '/fhir/R4/Patient/p1', (req) =>
      req.headers.authorization === accept
        ? json({ resourceType: 'Patient', id: 'p1' })
        : outcome('unauthorized', 401, 'Token expired'),
    );
    expect((await hearth.readResource('Patient', 'p1')).id).toBe('p1');
    expect(hearth.getAccessToken()).toBe('access-2');
    expect(onUnauthenticated).not.toHaveBeenCalled();

    accept = 'never';
    const unauthenticated = vi.fn();
    hearth.addEventListener('unauthenticated', unauthenticated);
    await expect(hearth.readResource('Patient', 'p1')).rejects.toMatchObject({ status: 401 });
    expect(onUnauthenticated).toHaveBeenCalledOnce();
    expect(unauthenticated).toHaveBeenCalledOnce();
    expect(hearth.getAccessToken()).toBeUndefined();
  });

  it('ends the session when the refresh is refused', async () => {
    const mock = authServer();
    const onUnauthenticated = vi.fn();
    const hearth = client(mock, { onUnauthenticated });
    hearth.setAccessToken(jwt({ exp: Math.floor(Date.now() / 1000) + 10 }), 'stale-refresh');
    mock.on('GET', '/fhir/R4/Patient/p1', () => json({ resourceType: 'Patient', id: 'p1' }));
    const err = await hearth.readResource('Patient', 'p1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    expect((err as OperationOutcomeError).message).toBe('Invalid refresh token');
    expect(onUnauthenticated).toHaveBeenCalledOnce();
    expect(hearth.isAuthenticated()).toBe(false);
  });

  it('uses a token set from elsewhere, reading its expiry from the JWT', async () => {
    const mock = authServer();
    const hearth = client(mock);
    const token = jwt({ exp: 4_000_000_000 });
    hearth.setAccessToken(token);
    expect(hearth.getActiveLogin()).toMatchObject({ accessToken: token, expiresAt: 4_000_000_000_000 });
    mock.on('GET', '/x', (req) => json({ auth: req.headers.authorization }));
    expect(await hearth.get('x')).toEqual({ auth: `Bearer ${token}` });
    hearth.setAccessToken('opaque');
    expect(hearth.getActiveLogin()?.expiresAt).toBeUndefined();
    expect(hearth.isAuthenticated()).toBe(true);
  });

  it('signs out: tells the server, forgets the session and the cache', async () => {
    const mock = authServer();
    const storage = new MemoryStorage();
    const hearth = client(mock, { storage });
    const changes = vi.fn();
    hearth.addEventListener('change', changes);
    await hearth.signInWithPassword({ email: 'a@b.c', password: 'secret' });
    expect(changes).toHaveBeenCalledTimes(1);
    expect(storage.getItem('activeLogin')).toContain('access-1');
    await hearth.signOut();
    expect(mock.to('POST', '/oauth2/logout')[0].headers.authorization).toBe('Bearer access-1');
    expect(storage.getItem('activeLogin')).toBeNull();
    expect(hearth.getAccessToken()).toBeUndefined();
    expect(hearth.getProfile()).toBeUndefined();
    expect(changes).toHaveBeenCalledTimes(2);
    hearth.removeEventListener('change', changes);
    hearth.setAccessToken('x');
    expect(changes).toHaveBeenCalledTimes(2);
  });
});
