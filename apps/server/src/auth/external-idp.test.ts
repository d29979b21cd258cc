/** Sign-in through an external OpenID Connect provider (a small one started here), and token exchange. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, type TestMember } from '../test/auth.js';
import { createClient } from './projects.js';

let t: TestApp;
let idp: Server;
let idpBase = '';
let carol: TestMember;
/** What the provider says about whoever signs in next. */
let nextIdentity = { sub: 'carol-sub', email: '' };
const codes = new Map<string, { sub: string; email: string }>();

let googleKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

async function startProvider(): Promise<void> {
  const { privateKey } = await generateKeyPair('RS256');
  const google = await generateKeyPair('RS256');
  googleKey = google.privateKey;
  const googleJwk = { ...(await exportJWK(google.publicKey)), kid: 'g1', alg: 'RS256', use: 'sig' };
  idp = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', idpBase);
    if (url.pathname === '/authorize') {
      const code = crypto.randomUUID();
      codes.set(code, { ...nextIdentity });
      const back = new URL(url.searchParams.get('redirect_uri') as string);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') as string);
      res.writeHead(302, { location: back.toString() }).end();
    } else if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const expectedAuth = `Basic ${Buffer.from('hearth-at-idp:idp-secret').toString('base64')}`;
      const who = codes.get(form.get('code') ?? '');
      if (req.headers.authorization !== expectedAuth || !who) {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
        return;
      }
      codes.delete(form.get('code') ?? '');
      const idToken = await new SignJWT({ email: who.email, email_verified: true })
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer(idpBase)
        .setAudience('hearth-at-idp')
        .setSubject(who.sub)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: `at-${who.email}`, id_token: idToken, token_type: 'Bearer' }));
    } else if (url.pathname === '/google-certs') {
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
    identityProvider: {
      authorizeUrl: `${idpBase}/authorize`,
      tokenUrl: `${idpBase}/token`,
      clientId: 'hearth-at-idp',
      clientSecret: 'idp-secret',
      usePkce: true,
    },
  });
  carol = await addTestMember(t.app, t.services, t.testProject.projectId);
  // Carol's email is in the IdP's domain.
  const user = { ...carol.user, email: 'carol@idp.example' };
  await t.services.systemRepo(user.meta?.project).updateResource(user);
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => idp?.close(r));
});

async function externalSignIn(): Promise<{ status: number; location?: string; body: string }> {
  const method = await t.app.inject({ method: 'POST', url: '/auth/method', payload: { email: 'carol@idp.example' } });
  expect(method.json().authorizeUrl).toContain('/auth/external/start');
  const start = await t.app.inject({ url: '/auth/external/start?domain=idp.example' });
  expect(start.statusCode).toBe(302);
  const atIdp = new URL(start.headers.location as string);
  expect(atIdp.origin).toBe(idpBase);
  expect(atIdp.searchParams.get('code_challenge_method')).toBe('S256');
  const idpAnswer = await fetch(atIdp, { redirect: 'manual' });
  const callback = new URL(idpAnswer.headers.get('location') as string);
  const res = await t.app.inject({ url: callback.pathname + callback.search });
  return { status: res.statusCode, location: res.headers.location as string | undefined, body: res.body };
}

describe('external OpenID Connect provider per domain', () => {
  it("signs in the domain's user and hands the app a code", async () => {
    nextIdentity = { sub: 'carol-sub', email: 'carol@idp.example' };
    const res = await externalSignIn();
    expect(res.status).toBe(302);
    const landing = new URL(res.location as string);
    expect(landing.origin + landing.pathname).toBe('https://app.example.org/signin');
    const code = landing.searchParams.get('code') as string;
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=authorization_code&code=${code}`,
    });
    expect(token.statusCode).toBe(200);
    const me = await t.app.inject({
      url: '/auth/me',
      headers: { authorization: `Bearer ${token.json().access_token}` },
    });
    expect(me.json().user.email).toBe('carol@idp.example');
    expect(me.json().security.login.authMethod).toBe('external');
  });

  it('refuses an email outside the domain the provider is for', async () => {
    nextIdentity = { sub: 'mallory', email: t.testProject.email };
    const res = await externalSignIn();
    expect(res.status).toBe(403);
    expect(res.body).toContain('cannot sign in');
  });

  it('refuses a forged state', async () => {
    const res = await t.app.inject({ url: '/auth/external?code=abc&state=forged' });
    expect(res.statusCode).toBe(400);
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
