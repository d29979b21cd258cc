import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, pkcePair, signIn } from '../test/auth.js';
import type { ClientApplication } from './types.js';

let t: TestApp;
let jwks: Server;
let jwksUrl = '';
let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let client: ClientApplication;
const REDIRECT = 'https://app.example.org/callback';

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
  method: 'POST' as const,
  url: '/oauth2/token',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  payload: new URLSearchParams(fields).toString(),
});

beforeAll(async () => {
  const pair = await generateKeyPair('ES384');
  privateKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES384' };
  jwks = createServer((_req, res) =>
    res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })),
  );
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  t = await createTestApp({ config: { outboundAllowList: ['127.0.0.1'] } });
  const res = await t.app.inject({
    method: 'POST',
    url: `/admin/projects/${t.testProject.projectId}/client`,
    headers: t.authHeaders,
    payload: { name: 'Web', redirectUri: REDIRECT, jwksUri: jwksUrl },
  });
  client = res.json();
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => jwks?.close(r));
});

async function authorize(
  params: Record<string, string>,
  credentials = { email: t.testProject.email, password: t.testProject.password },
) {
  const page = await t.app.inject({ url: `/oauth2/authorize?${new URLSearchParams(params)}` });
  if (page.statusCode !== 200) {
    return { page, post: undefined };
  }
  const post = await t.app.inject({
    method: 'POST',
    url: '/oauth2/authorize',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...params, ...credentials }).toString(),
  });
  return { page, post };
}

describe('authorization code flow in the browser', () => {
  it('renders a sign-in page, then redirects with code and state; the code redeems with PKCE', async () => {
    const pkce = pkcePair();
    const params = {
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: REDIRECT,
      scope: 'openid fhirUser offline_access',
      state: 'xyz',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    };
    const { page, post } = await authorize(params);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('<form');
    expect(post?.statusCode).toBe(302);
    const location = new URL(post?.headers.location as string);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('xyz');
    const code = location.searchParams.get('code') as string;
    const wrongRedirect = await t.app.inject(
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: pkce.verifier,
        client_id: client.id as string,
        redirect_uri: 'https://evil.example/cb',
      }),
    );
    expect(wrongRedirect.statusCode).toBe(400);
  });

  it('redeems the code with the same redirect_uri, issuing offline refresh tokens', async () => {
    const pkce = pkcePair();
    const params = {
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: REDIRECT,
      scope: 'openid fhirUser offline_access',
      state: 's',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    };
    const { post } = await authorize(params);
    const code = new URL(post?.headers.location as string).searchParams.get('code') as string;
    const token = await t.app.inject(
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: pkce.verifier,
        client_id: client.id as string,
        redirect_uri: REDIRECT,
      }),
    );
    expect(token.statusCode).toBe(200);
    expect(token.json().refresh_token).toBeTruthy();
    expect(token.json().scope).toBe('openid fhirUser offline_access');
    expect(token.json().fhirUser).toContain('/fhir/R4/Practitioner/');
    const userinfo = await t.app.inject({
      url: '/oauth2/userinfo',
      headers: { authorization: `Bearer ${token.json().access_token}` },
    });
    expect(userinfo.json().sub).toBe(t.testProject.user.id);
  });

  it('puts the nonce and the requested claims in the ID token, audience the client', async () => {
    const pkce = pkcePair();
    const { post } = await authorize({
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: REDIRECT,
      scope: 'openid profile email fhirUser',
      state: 'n',
      nonce: 'n-0S6_WzA2Mj',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    const code = new URL(post?.headers.location as string).searchParams.get('code') as string;
    const token = await t.app.inject(
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: pkce.verifier,
        client_id: client.id as string,
        redirect_uri: REDIRECT,
      }),
    );
    const id = decodeJwt(token.json().id_token);
    expect(id.nonce).toBe('n-0S6_WzA2Mj');
    expect(id.aud).toBe(client.id);
    expect(id.iss).toBe(t.config.baseUrl);
    expect(id.sub).toBe(t.testProject.user.id);
    expect(id.email).toBe(t.testProject.email);
    expect(id.fhirUser).toBe(`${t.config.baseUrl}fhir/R4/${token.json().profile.reference}`);
    // Without offline_access a third-party app gets no refresh token.
    expect(token.json().refresh_token).toBeUndefined();
  });

  it('never redirects to an unregistered redirect URI, and shows the error instead', async () => {
    const pkce = pkcePair();
    const { page } = await authorize({
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: `${REDIRECT}/extra`,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    expect(page.statusCode).toBe(400);
    expect(page.headers.location).toBeUndefined();
    const prefix = await authorize({
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: 'https://app.example.org/',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    expect(prefix.page.statusCode).toBe(400);
    const unknownClient = await authorize({
      response_type: 'code',
      client_id: '00000000-0000-4000-8000-000000000000',
      redirect_uri: REDIRECT,
    });
    expect(unknownClient.page.statusCode).toBe(400);
  });

  it('redirects errors back for a known redirect URI: PKCE missing, bad response_type', async () => {
    const noPkce = await t.app.inject({
      url: `/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.id as string, redirect_uri: REDIRECT, state: 'q' })}`,
    });
    expect(noPkce.statusCode).toBe(302);
    expect(new URL(noPkce.headers.location as string).searchParams.get('error')).toBe('invalid_request');
    const token = await t.app.inject({
      url: `/oauth2/authorize?${new URLSearchParams({ response_type: 'token', client_id: client.id as string, redirect_uri: REDIRECT })}`,
    });
    expect(new URL(token.headers.location as string).searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('shows the form again for a wrong password', async () => {
    const pkce = pkcePair();
    const { post } = await authorize(
      {
        response_type: 'code',
        client_id: client.id as string,
        redirect_uri: REDIRECT,
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
      },
      { email: t.testProject.email, password: 'wrong password' },
    );
    expect(post?.statusCode).toBe(400);
    expect(post?.body).toContain('invalid');
  });
});

describe('client credentials', () => {
  it('with client_secret in the form and with HTTP Basic', async () => {
    const post = await t.app.inject(
      form({
        grant_type: 'client_credentials',
        client_id: client.id as string,
        client_secret: client.secret as string,
      }),
    );
    expect(post.statusCode).toBe(200);
    expect(post.json().refresh_token).toBeUndefined();
    const basic = await t.app.inject(
      form(
        { grant_type: 'client_credentials' },
        { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
      ),
    );
    expect(basic.statusCode).toBe(200);
    const fhir = await t.app.inject({
      url: '/fhir/R4/Patient',
      headers: { authorization: `Bearer ${basic.json().access_token}` },
    });
    expect(fhir.statusCode).toBe(200);
    const wrong = await t.app.inject(
      form({ grant_type: 'client_credentials', client_id: client.id as string, client_secret: 'nope' }),
    );
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('invalid_client');
    const none = await t.app.inject(form({ grant_type: 'client_credentials', client_id: client.id as string }));
    expect(none.statusCode).toBe(401);
    // Both outcomes are in the audit trail: the failure with the client named, the success in its project.
    const audits = await t.pool.query<{ content: string; project_id: string }>(
      `SELECT content, project_id FROM "AuditEvent" WHERE content LIKE $1`,
      [`%${client.id}%`],
    );
    const events = audits.rows.map((r) => ({ ...JSON.parse(r.content), project: r.project_id }));
    const failure = events.find((e) => e.outcome === '4');
    expect(failure?.outcomeDesc).toBe('Invalid client secret');
    const success = events.find((e) => e.outcome === '0');
    expect(success?.agent[0].who.reference).toBe(`ClientApplication/${client.id}`);
    expect(success?.project).toBe(t.testProject.projectId);
  });

  it('with a private_key_jwt assertion (keys from the client jwksUri); replays are refused', async () => {
    const assertion = async (aud = `${t.config.baseUrl}oauth2/token`, jti = crypto.randomUUID()) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES384', kid: 'k1' })
        .setIssuer(client.id as string)
        .setSubject(client.id as string)
        .setAudience(aud)
        .setJti(jti)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    const type = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
    const jwt = await assertion();
    const ok = await t.app.inject(
      form({
        grant_type: 'client_credentials',
        client_assertion_type: type,
        client_assertion: jwt,
        scope: 'system/*.rs',
      }),
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json().scope).toBe('system/*.rs');
    const replay = await t.app.inject(
      form({ grant_type: 'client_credentials', client_assertion_type: type, client_assertion: jwt }),
    );
    expect(replay.statusCode).toBe(401);
    const wrongAud = await t.app.inject(
      form({
        grant_type: 'client_credentials',
        client_assertion_type: type,
        client_assertion: await assertion('https://elsewhere/token'),
      }),
    );
    expect(wrongAud.statusCode).toBe(401);
    // Without a jti a replay could not be told apart: refused.
    const noJti = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES384', kid: 'k1' })
      .setIssuer(client.id as string)
      .setSubject(client.id as string)
      .setAudience(`${t.config.baseUrl}oauth2/token`)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    const noJtiRes = await t.app.inject(
      form({ grant_type: 'client_credentials', client_assertion_type: type, client_assertion: noJti }),
    );
    expect(noJtiRes.statusCode).toBe(401);
    expect(noJtiRes.json().error_description).toContain('jti');
    const other = await generateKeyPair('ES384');
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES384', kid: 'k1' })
      .setIssuer(client.id as string)
      .setSubject(client.id as string)
      .setAudience(`${t.config.baseUrl}oauth2/token`)
      .setJti('x')
      .setExpirationTime('5m')
      .sign(other.privateKey);
    expect(
      (
        await t.app.inject(
          form({ grant_type: 'client_credentials', client_assertion_type: type, client_assertion: forged }),
        )
      ).statusCode,
    ).toBe(401);
    // The system/*.rs scope reads but does not write.
    const headers = { authorization: `Bearer ${ok.json().access_token}` };
    expect((await t.app.inject({ url: '/fhir/R4/Patient', headers })).statusCode).toBe(200);
    const write = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { ...headers, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Patient' },
    });
    expect(write.statusCode).toBe(403);
  });

  it('HTTP Basic client credentials work on the FHIR API directly', async () => {
    const res = await t.app.inject({
      url: '/fhir/R4/Patient',
      headers: { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
    });
    expect(res.statusCode).toBe(200);
    const bad = await t.app.inject({
      url: '/fhir/R4/Patient',
      headers: { authorization: `Basic ${Buffer.from(`${client.id}:wrong`).toString('base64')}` },
    });
    expect(bad.statusCode).toBe(401);
  });
});

describe('other grants and endpoints', () => {
  it('refuses unknown grant types and missing grant_type', async () => {
    expect((await t.app.inject(form({ grant_type: 'password', username: 'a', password: 'b' }))).json().error).toBe(
      'unsupported_grant_type',
    );
    expect((await t.app.inject(form({}))).json().error).toBe('invalid_request');
  });

  it('introspects live, revoked and dead tokens', async () => {
    const auth = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
    const live = await t.app.inject({
      ...form({ token: t.token }, { authorization: auth }),
      url: '/oauth2/introspect',
    });
    expect(live.json().active).toBe(true);
    expect(live.json().sub).toBe(t.testProject.user.id);
    const dead = await t.app.inject({
      ...form({ token: 'not.a.token' }, { authorization: auth }),
      url: '/oauth2/introspect',
    });
    expect(dead.json()).toEqual({ active: false });
    const refresh = await t.app.inject({
      ...form({ token: t.testProject.tokens.refresh_token as string }, { authorization: auth }),
      url: '/oauth2/introspect',
    });
    expect(refresh.json().active).toBe(true);
    const anonymous = await t.app.inject({ ...form({ token: t.token }), url: '/oauth2/introspect' });
    expect(anonymous.statusCode).toBe(401);
    // A token whose session was signed out is no longer active, nor is its refresh token.
    const ended = await signIn(t.app, t.testProject.email, t.testProject.password);
    await t.app.inject({
      method: 'POST',
      url: '/oauth2/logout',
      headers: { authorization: `Bearer ${ended.access_token}` },
    });
    for (const token of [ended.access_token, ended.refresh_token as string]) {
      const res = await t.app.inject({ ...form({ token }, { authorization: auth }), url: '/oauth2/introspect' });
      expect(res.json()).toEqual({ active: false });
    }
  });

  it('registers clients dynamically for project admins (RFC 7591)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/register',
      headers: t.authHeaders,
      payload: { client_name: 'Dynamic', redirect_uris: ['https://dyn.example/cb'] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().client_id).toBeTruthy();
    expect(res.json().client_secret).toBeTruthy();
    expect(res.json().redirect_uris).toEqual(['https://dyn.example/cb']);
    const bad = await t.app.inject({
      method: 'POST',
      url: '/oauth2/register',
      headers: t.authHeaders,
      payload: { redirect_uris: ['not a uri'] },
    });
    expect(bad.json().error).toBe('invalid_redirect_uri');
    expect((await t.app.inject({ method: 'POST', url: '/oauth2/register', payload: {} })).statusCode).toBe(401);
    // The registered client signs in with its credentials and acts in the registrar's project.
    const tokens = await t.app.inject(
      form(
        { grant_type: 'client_credentials' },
        {
          authorization: `Basic ${Buffer.from(`${res.json().client_id}:${res.json().client_secret}`).toString('base64')}`,
        },
      ),
    );
    expect(tokens.statusCode).toBe(200);
    expect(tokens.json().project.reference).toBe(`Project/${t.testProject.projectId}`);
    // Members who are not admins may not register clients.
    const member = await addTestMember(t.app, t.services, t.testProject.projectId);
    const refused = await t.app.inject({
      method: 'POST',
      url: '/oauth2/register',
      headers: member.headers,
      payload: { client_name: 'Sneaky', redirect_uris: ['https://dyn.example/cb'] },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().resourceType).toBe('OperationOutcome');
  });

  it('signs with rotated keys: a new key signs, the old one still verifies', async () => {
    const before = (await t.app.inject({ url: '/.well-known/jwks.json' })).json().keys.length;
    await t.services.auth.keys.rotateIfDue(Date.now() + 365 * 24 * 3600 * 1000);
    const keys = (await t.app.inject({ url: '/.well-known/jwks.json' })).json().keys;
    expect(keys.length).toBe(before + 1);
    // A token signed by the previous key is still accepted.
    expect((await t.app.inject({ url: '/auth/me', headers: t.authHeaders })).statusCode).toBe(200);
  });

  it('switches to RS256 when configured: a new RSA key signs at once, EC tokens still verify', async () => {
    const rsa = await createTestApp({ db: t.db, config: { signingAlgorithm: 'RS256' } });
    try {
      const jwks = (await rsa.app.inject({ url: '/.well-known/jwks.json' })).json().keys as { kty: string }[];
      expect(jwks.map((k) => k.kty).sort()).toEqual(expect.arrayContaining(['EC', 'RSA']));
      expect(decodeProtectedHeader(rsa.token).alg).toBe('RS256');
      const discovery = (await rsa.app.inject({ url: '/.well-known/openid-configuration' })).json();
      expect(discovery.id_token_signing_alg_values_supported).toContain('RS256');
      // The ES256 server's token is still good on the RS256 server, and the reverse.
      expect((await rsa.app.inject({ url: '/auth/me', headers: t.authHeaders })).statusCode).toBe(200);
      await t.services.auth.keys.reload();
      expect((await t.app.inject({ url: '/auth/me', headers: rsa.authHeaders })).statusCode).toBe(200);
      // Restarting with the same algorithm makes no further key.
      const before = jwks.length;
      await rsa.services.auth.keys.rotateIfDue();
      expect(rsa.services.auth.keys.publicKeys().keys.length).toBe(before);
    } finally {
      await rsa.close();
    }
  });
});

describe('RP-initiated logout (OpenID Connect)', () => {
  async function browserSignIn(): Promise<{ id_token: string; access_token: string; refresh_token?: string }> {
    const pkce = pkcePair();
    const { post } = await authorize({
      response_type: 'code',
      client_id: client.id as string,
      redirect_uri: REDIRECT,
      scope: 'openid offline_access',
      state: 'l',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    const code = new URL(post?.headers.location as string).searchParams.get('code') as string;
    return (
      await t.app.inject(
        form({
          grant_type: 'authorization_code',
          code,
          code_verifier: pkce.verifier,
          client_id: client.id as string,
          redirect_uri: REDIRECT,
        }),
      )
    ).json();
  }
  const me = (token: string) => t.app.inject({ url: '/auth/me', headers: { authorization: `Bearer ${token}` } });

  it('ends the session of an ID token and goes back to a registered URI with the state', async () => {
    const tokens = await browserSignIn();
    expect((await me(tokens.access_token)).statusCode).toBe(200);
    const res = await t.app.inject({
      url: `/oauth2/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: REDIRECT, state: 'bye' })}`,
    });
    expect(res.statusCode).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('bye');
    expect((await me(tokens.access_token)).statusCode).toBe(401);
    const refresh = await t.app.inject(
      form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }),
    );
    expect(refresh.json().error).toBe('invalid_grant');
  });

  it('shows a page without a redirect URI; accepts the hint as a form post', async () => {
    const tokens = await browserSignIn();
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ id_token_hint: tokens.id_token }).toString(),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect((await me(tokens.access_token)).statusCode).toBe(401);
  });

  it('never redirects to an unregistered URI, and refuses hints that are not its ID tokens', async () => {
    const tokens = await browserSignIn();
    const elsewhere = await t.app.inject({
      url: `/oauth2/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: 'https://evil.example/' })}`,
    });
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json().resourceType).toBe('OperationOutcome');
    expect(elsewhere.headers.location).toBeUndefined();
    // The session was not ended by a refused request.
    expect((await me(tokens.access_token)).statusCode).toBe(200);
    // An access token is not an ID token; a forged token is refused.
    const access = await t.app.inject({
      url: `/oauth2/logout?${new URLSearchParams({ id_token_hint: tokens.access_token })}`,
    });
    expect(access.statusCode).toBe(400);
    const other = await generateKeyPair('ES256');
    const forged = await new SignJWT({ login_id: decodeJwt(tokens.id_token).login_id as string })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(t.config.baseUrl)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(other.privateKey);
    const forgedRes = await t.app.inject({
      url: `/oauth2/logout?${new URLSearchParams({ id_token_hint: forged })}`,
    });
    expect(forgedRes.statusCode).toBe(400);
    expect((await me(tokens.access_token)).statusCode).toBe(200);
    // Another client cannot name itself to use its own redirect URIs.
    const wrongClient = await t.app.inject({
      url: `/oauth2/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, client_id: t.testProject.client.id as string })}`,
    });
    expect(wrongClient.statusCode).toBe(400);
  });

  it('accepts an expired ID token as a hint', async () => {
    const tokens = await browserSignIn();
    const claims = decodeJwt(tokens.id_token);
    // The same ID token as if issued two hours ago: expired an hour ago.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 2 * 3600 * 1000);
    const expired = await t.services.auth.keys.sign({ ...claims, exp: undefined, iat: undefined }, 3600);
    vi.useRealTimers();
    expect(decodeJwt(expired).exp).toBeLessThan(Date.now() / 1000);
    const res = await t.app.inject({ url: `/oauth2/logout?${new URLSearchParams({ id_token_hint: expired })}` });
    expect(res.statusCode).toBe(200);
    expect((await me(tokens.access_token)).statusCode).toBe(401);
  });
});
