/**
 * Sign-in through an external OpenID Connect provider (a real one, oidc-provider, started here),
 * Sign in with Google, and token exchange.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, type TestMember } from '../test/auth.js';
import { startIdentityProvider, type TestIdentityProvider } from '../test/identity-provider.js';
import { createClient } from './projects.js';

let t: TestApp;
/** A real OpenID Connect provider (oidc-provider) for the browser sign-in. */
let op: TestIdentityProvider;
/** Google's key server and an OAuth 2.0 userinfo endpoint (for token exchange). */
let idp: Server;
let idpBase = '';
let carol: TestMember;

let googleKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

async function startProvider(): Promise<void> {
  const google = await generateKeyPair('RS256');
  googleKey = google.privateKey;
  const googleJwk = { ...(await exportJWK(google.publicKey)), kid: 'g1', alg: 'RS256', use: 'sig' };
  idp = createServer((req, res) => {
    const url = new URL(req.url ?? '/', idpBase);
    if (url.pathname === '/google-certs') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [googleJwk] }));
    } else if (url.pathname === '/userinfo') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!token.startsWith('at-')) {
        res.writeHead(401).end();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ sub: 'x', email: token.slice(3), email_verified: true }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  idpBase = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  await startProvider();
  op = await startIdentityProvider('http://localhost:8103/auth/external');
  t = await createTestApp({
    config: {
      outboundAllowList: ['127.0.0.1'],
      appBaseUrl: 'https://app.example.org/',
      googleClientId: 'google-client-1',
      googleJwksUrl: `${idpBase}/google-certs`,
    },
  });
  await t.services.systemRepo().createResource({
    resourceType: 'DomainConfiguration',
    domain: 'idp.example',
    identityProvider: { issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, usePkce: true },
  });
  carol = await addTestMember(t.app, t.services, t.testProject.projectId);
  // Carol's email is in the IdP's domain.
  const user = { ...carol.user, email: 'carol@idp.example', externalId: 'carol-sub' };
  await t.services.systemRepo(user.meta?.project).updateResource(user);
});
afterAll(async () => {
  await t?.close();
  await op?.close();
  await new Promise((r) => idp?.close(r));
});

const carolAtIdp = { sub: 'carol-sub', email: 'carol@idp.example' };

/** The name=value of the cookie a response sets. */
function cookieOf(setCookie: string | string[] | undefined): string {
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  expect(first).toMatch(/HttpOnly/i);
  return (first as string).split(';')[0];
}

/** Starts the sign-in at Hearth; answers the provider's authorization URL and the pending cookie. */
async function startAt(domain: string): Promise<{ authorizationUrl: string; cookie: string }> {
  const start = await t.app.inject({ url: `/auth/external/start?domain=${domain}` });
  expect(start.statusCode, start.body).toBe(302);
  return { authorizationUrl: start.headers.location as string, cookie: cookieOf(start.headers['set-cookie']) };
}

async function externalSignIn(
  identity = carolAtIdp,
  options: { cookie?: string } = {},
): Promise<{ status: number; location?: string; body: string; reason?: string }> {
  const method = await t.app.inject({ method: 'POST', url: '/auth/method', payload: { email: 'carol@idp.example' } });
  expect(method.json().authorizeUrl).toContain('/auth/external/start');
  const { authorizationUrl, cookie } = await startAt('idp.example');
  const back = await op.authorize(authorizationUrl, identity);
  expect(back.origin + back.pathname).toBe('http://localhost:8103/auth/external');
  const res = await t.app.inject({
    url: back.pathname + back.search,
    headers: options.cookie === '' ? {} : { cookie: options.cookie ?? cookie },
  });
  return {
    status: res.statusCode,
    location: res.headers.location as string | undefined,
    body: res.body,
    reason: res.statusCode >= 400 ? (res.json().issue[0].details.text as string) : undefined,
  };
}

/** The Hearth user a finished external sign-in signed in. */
async function signedInEmail(location: string | undefined): Promise<string> {
  const landing = new URL(location as string);
  expect(landing.origin + landing.pathname).toBe('https://app.example.org/signin');
  const token = await t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `grant_type=authorization_code&code=${landing.searchParams.get('code')}`,
  });
  expect(token.statusCode).toBe(200);
  const me = await t.app.inject({ url: '/auth/me', headers: { authorization: `Bearer ${token.json().access_token}` } });
  expect(me.json().security.login.authMethod).toBe('external');
  return me.json().user.email;
}

describe('external OpenID Connect provider per domain', () => {
  it("signs in the domain's user and hands the app a code", async () => {
    const { authorizationUrl } = await startAt('idp.example');
    const atIdp = new URL(authorizationUrl);
    expect(atIdp.origin).toBe(op.issuer);
    expect(atIdp.searchParams.get('code_challenge_method')).toBe('S256');
    expect(atIdp.searchParams.get('nonce')).toBeTruthy();
    // The state is a random value: the pending sign-in (verifier, nonce) stays in the cookie.
    expect(atIdp.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    const res = await externalSignIn();
    expect(res.status, res.body).toBe(302);
    expect(await signedInEmail(res.location)).toBe('carol@idp.example');
  });

  it('accepts an ID token re-signed with the provider key and unchanged claims (each forgery below changes one thing)', async () => {
    op.rewriteNextIdToken((idToken) => op.reissue(idToken, {}));
    const res = await externalSignIn();
    expect(res.status, res.body).toBe(302);
    expect(await signedInEmail(res.location)).toBe('carol@idp.example');
  });

  it('refuses an ID token whose signature is not the provider’s', async () => {
    op.rewriteNextIdToken((idToken) => op.reissue(idToken, {}, 'impostor'));
    const res = await externalSignIn();
    expect(res.status).toBe(400);
    expect(res.reason).toMatch(/signature/i);
  });

  it('refuses an ID token from another issuer', async () => {
    op.rewriteNextIdToken((idToken) => op.reissue(idToken, { iss: 'https://evil.example' }));
    const res = await externalSignIn();
    expect(res.status).toBe(400);
    expect(res.reason).toContain('"iss" (issuer)');
  });

  it('refuses an ID token for another audience, or for us among others but authorized for another party', async () => {
    op.rewriteNextIdToken((idToken) => op.reissue(idToken, { aud: 'another-client' }));
    let res = await externalSignIn();
    expect(res.status).toBe(400);
    expect(res.reason).toContain('"aud" (audience)');
    op.rewriteNextIdToken((idToken) =>
      op.reissue(idToken, { aud: [op.clientId, 'another-client'], azp: 'another-client' }),
    );
    res = await externalSignIn();
    expect(res.status).toBe(400);
    expect(res.reason).toContain('"azp"');
  });

  it('refuses an ID token that does not carry the nonce this sign-in sent', async () => {
    op.rewriteNextIdToken((idToken) => op.reissue(idToken, { nonce: 'a-nonce-from-another-sign-in' }));
    const res = await externalSignIn();
    expect(res.status).toBe(400);
    expect(res.reason).toContain('"nonce"');
  });

  it('refuses an expired ID token', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    op.rewriteNextIdToken((idToken) => op.reissue(idToken, { iat: past - 300, exp: past }));
    const res = await externalSignIn();
    expect(res.status).toBe(400);
    expect(res.reason).toContain('"exp" (expiration time)');
  });

  it('answers 400 when the provider sends something that is not an ID token, or refuses a code used twice', async () => {
    op.rewriteNextIdToken(async () => 'not-a-jwt');
    const garbage = await externalSignIn();
    expect(garbage.status).toBe(400);
    expect(garbage.reason).toContain("identity provider's answer was refused");
    // The same answer again (a replayed callback): the provider refuses the spent code.
    const { authorizationUrl, cookie } = await startAt('idp.example');
    const back = await op.authorize(authorizationUrl, carolAtIdp);
    const first = await t.app.inject({ url: back.pathname + back.search, headers: { cookie } });
    expect(first.statusCode, first.body).toBe(302);
    const again = await t.app.inject({ url: back.pathname + back.search, headers: { cookie } });
    expect(again.statusCode).toBe(400);
    expect(again.json().issue[0].details.text).toContain('invalid_grant');
  });

  it('refuses an email outside the domain the provider is for', async () => {
    const res = await externalSignIn({ sub: 'mallory', email: t.testProject.email });
    expect(res.status).toBe(403);
    expect(res.body).toContain('cannot sign in');
  });

  it('refuses a forged state, and an answer in a browser that did not start the sign-in', async () => {
    const forged = await t.app.inject({ url: '/auth/external?code=abc&state=forged' });
    expect(forged.statusCode).toBe(400);
    // A code injected into another browser (login CSRF) finds no pending sign-in there.
    const elsewhere = await externalSignIn(carolAtIdp, { cookie: '' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toContain('started in this browser');
    // Nor does the pending sign-in of another attempt in the same browser serve for this one.
    const other = await startAt('idp.example');
    const res = await externalSignIn(carolAtIdp, { cookie: other.cookie });
    expect(res.status).toBe(400);
  });

  it('keeps a few pending sign-ins per browser and clears abandoned ones beyond that', async () => {
    const few = Array.from({ length: 4 }, (_, i) => `hearth-idp-old${i}=x`).join('; ');
    const kept = await t.app.inject({ url: '/auth/external/start?domain=idp.example', headers: { cookie: few } });
    expect([kept.headers['set-cookie']].flat()).toHaveLength(1);
    const many = Array.from({ length: 5 }, (_, i) => `hearth-idp-old${i}=x`).join('; ');
    const cleared = await t.app.inject({ url: '/auth/external/start?domain=idp.example', headers: { cookie: many } });
    const setCookies = [cleared.headers['set-cookie']].flat() as string[];
    expect(setCookies).toHaveLength(6);
    expect(setCookies.filter((c) => /^hearth-idp-old\d=;.*Max-Age=0/.test(c))).toHaveLength(5);
  });

  it('discovers the provider once, not on every sign-in', async () => {
    const before = op.requests.filter((p) => p === '/.well-known/openid-configuration').length;
    const res = await externalSignIn();
    expect(res.status, res.body).toBe(302);
    expect(op.requests.filter((p) => p === '/.well-known/openid-configuration').length).toBe(before);
  });

  it('requires an issuer, and https for a provider that is not on this machine', async () => {
    await t.services.systemRepo().createResource({
      resourceType: 'DomainConfiguration',
      domain: 'plain.example',
      identityProvider: { issuer: 'http://idp.plain.example', clientId: 'c', clientSecret: 's' },
    });
    const plain = await t.app.inject({ url: '/auth/external/start?domain=plain.example' });
    expect(plain.statusCode).toBe(400);
    expect(plain.json().issue[0].diagnostics ?? plain.json().issue[0].details.text).toMatch(/must be an https URL/);
    expect(plain.json().issue[0].expression).toEqual(['DomainConfiguration.identityProvider.issuer']);
    await t.services.systemRepo().createResource({
      resourceType: 'DomainConfiguration',
      domain: 'noissuer.example',
      identityProvider: { authorizeUrl: `${op.issuer}/auth`, tokenUrl: `${op.issuer}/token`, clientId: 'c' },
    });
    const noIssuer = await t.app.inject({ url: '/auth/external/start?domain=noissuer.example' });
    expect(noIssuer.statusCode).toBe(400);
    expect(noIssuer.json().issue[0].expression).toEqual(['DomainConfiguration.identityProvider.issuer']);
  });

  it('answers 400, not 500, when the provider cannot be discovered', async () => {
    await t.services.systemRepo().createResource({
      resourceType: 'DomainConfiguration',
      domain: 'gone.example',
      identityProvider: { issuer: `${idpBase}/no-such-issuer`, clientId: 'c', clientSecret: 's' },
    });
    const res = await t.app.inject({ url: '/auth/external/start?domain=gone.example' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('discovery');
  });
});

describe("a client's own OpenID Connect provider", () => {
  it('signs in by subject and returns to the client with its code and state', async () => {
    const { client } = await createClient(t.services.auth.deps, t.testProject.projectId, {
      name: 'SPA with its own provider',
      redirectUri: 'https://spa.example.org/callback',
      identityProvider: { issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, useSubject: true },
    });
    const start = await t.app.inject({
      url: `/auth/external/start?clientId=${client.id}&redirectUri=${encodeURIComponent('https://spa.example.org/callback')}&state=spa-state`,
    });
    expect(start.statusCode, start.body).toBe(302);
    const back = await op.authorize(start.headers.location as string, {
      sub: 'carol-sub',
      email: 'x@elsewhere.example',
    });
    const res = await t.app.inject({
      url: back.pathname + back.search,
      headers: { cookie: cookieOf(start.headers['set-cookie']) },
    });
    expect(res.statusCode, res.body).toBe(302);
    const landing = new URL(res.headers.location as string);
    expect(landing.origin + landing.pathname).toBe('https://spa.example.org/callback');
    expect(landing.searchParams.get('state')).toBe('spa-state');
    expect(landing.searchParams.get('code')).toBeTruthy();
    // The pending sign-in's cookie is cleared once used.
    expect(String(res.headers['set-cookie'])).toMatch(/Max-Age=0/);
  });
});

describe('token exchange', () => {
  it("trades the IdP's access token for a Hearth token of the same user", async () => {
    const { client } = await createClient(t.services.auth.deps, t.testProject.projectId, {
      name: 'Exchanger',
      identityProvider: {
        authorizeUrl: `${idpBase}/authorize`,
        tokenUrl: `${idpBase}/token`,
        userInfoUrl: `${idpBase}/userinfo`,
        clientId: 'hearth-at-idp',
      },
    });
    const exchange = (subject: string) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          client_id: client.id as string,
          subject_token: subject,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        }).toString(),
      });
    const ok = await exchange('at-carol@idp.example');
    expect(ok.statusCode).toBe(200);
    expect(ok.json().profile.reference).toBe(carol.tokens.profile.reference);
    const bad = await exchange('garbage');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_grant');
  });
});

describe('Sign in with Google', () => {
  const credential = (email: string, aud = 'google-client-1', iss = 'https://accounts.google.com') =>
    new SignJWT({ email, email_verified: true, given_name: 'G', family_name: 'User' })
      .setProtectedHeader({ alg: 'RS256', kid: 'g1' })
      .setIssuer(iss)
      .setAudience(aud)
      .setSubject('google-sub')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(googleKey);
  const google = async (payload: object) => t.app.inject({ method: 'POST', url: '/auth/google', payload });

  it('signs in a known user with a verified Google ID token', async () => {
    const res = await google({
      googleClientId: 'google-client-1',
      googleCredential: await credential('carol@idp.example'),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().code).toBeTruthy();
  });

  it('refuses other audiences, issuers, unknown client ids and unknown users; creates users when asked', async () => {
    expect(
      (
        await google({
          googleClientId: 'google-client-1',
          googleCredential: await credential('carol@idp.example', 'other-aud'),
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (
        await google({
          googleClientId: 'google-client-1',
          googleCredential: await credential('carol@idp.example', 'google-client-1', 'https://evil.example'),
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await google({ googleClientId: 'unknown', googleCredential: await credential('carol@idp.example', 'unknown') }))
        .statusCode,
    ).toBe(400);
    expect(
      (await google({ googleClientId: 'google-client-1', googleCredential: await credential('newbie@gmail.example') }))
        .statusCode,
    ).toBe(400);
    const created = await google({
      googleClientId: 'google-client-1',
      googleCredential: await credential('newbie@gmail.example'),
      createUser: true,
    });
    expect(created.statusCode).toBe(200);
    expect(created.json().memberships).toEqual([]);
  });
});

describe('sessions', () => {
  it('/auth/exchange trades an external token with a JSON body; /auth/revoke ends a session', async () => {
    const { client } = await createClient(t.services.auth.deps, t.testProject.projectId, {
      name: 'Exchanger 2',
      identityProvider: {
        authorizeUrl: `${idpBase}/authorize`,
        tokenUrl: `${idpBase}/token`,
        userInfoUrl: `${idpBase}/userinfo`,
        clientId: 'hearth-at-idp',
      },
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/exchange',
      payload: { clientId: client.id, externalAccessToken: 'at-carol@idp.example' },
    });
    expect(res.statusCode).toBe(200);
    const headers = { authorization: `Bearer ${res.json().access_token}` };
    const other = await t.app.inject({
      method: 'POST',
      url: '/auth/revoke',
      headers: carol.headers,
      payload: { loginId: (await t.app.inject({ url: '/auth/me', headers })).json().security.login.id },
    });
    expect(other.statusCode).toBe(200);
    expect((await t.app.inject({ url: '/auth/me', headers })).statusCode).toBe(401);
    const notMine = await t.app.inject({
      method: 'POST',
      url: '/auth/revoke',
      headers: carol.headers,
      payload: { loginId: (await t.app.inject({ url: '/auth/me', headers: t.authHeaders })).json().security.login.id },
    });
    expect(notMine.statusCode).toBe(403);
  });
});
