import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject, pkcePair, signIn } from '../test/auth.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString(),
});

describe('first start', () => {
  it('created the super admin, who signs in to the super admin project', async () => {
    const tokens = await signIn(t.app, t.superAdmin.email, t.superAdmin.password);
    expect(tokens.project.reference).toBe(`Project/${t.services.superAdminProjectId}`);
    const me = await t.app.inject({ url: '/auth/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.statusCode).toBe(200);
    expect(me.json().project.superAdmin).toBe(true);
    expect(me.json().user.passwordHash).toBeUndefined();
  });
});

describe('first start without a configured password', () => {
  it('generates one, prints how to sign in, and the super admin signs in with it', async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    let fresh: TestApp | undefined;
    try {
      fresh = await createTestApp({ config: { adminPassword: '' } });
    } finally {
      spy.mockRestore();
    }
    try {
      const generated = fresh.services.auth.bootstrap.generatedPassword as string;
      expect(generated.length).toBeGreaterThanOrEqual(16);
      const printed = written.join('');
      expect(printed).toContain(fresh.config.adminEmail);
      expect(printed).toContain(generated);
      expect(printed).toContain(`Default client id: ${fresh.services.auth.bootstrap.defaultClientId}`);
      const tokens = await signIn(fresh.app, fresh.config.adminEmail, generated);
      expect(tokens.project.reference).toBe(`Project/${fresh.services.superAdminProjectId}`);
    } finally {
      await fresh.close();
    }
  });
});

describe('sign-in flow', () => {
  it('answers login then code then tokens, with the contract fields', async () => {
    const tokens = t.testProject.tokens;
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.project).toEqual({ reference: `Project/${t.testProject.projectId}` });
    expect(tokens.profile.reference).toMatch(/^Practitioner\//);
    expect(tokens.id_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    const claims = decodeJwt(tokens.access_token);
    expect(claims.login_id).toBeTruthy();
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(decodeProtectedHeader(tokens.access_token).alg).toBe('ES256');
  });

  it('rejects a wrong password with 400 and records the failure as an AuditEvent', async () => {
    const pkce = pkcePair();
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: {
        email: t.testProject.email,
        password: 'wrong-password',
        codeChallenge: pkce.challenge,
        codeChallengeMethod: 'S256',
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().resourceType).toBe('OperationOutcome');
    const audits = await t.pool.query(
      `SELECT content FROM "AuditEvent" WHERE content LIKE '%"outcome":"4"%' AND content LIKE $1`,
      [`%${t.testProject.email}%`],
    );
    expect(audits.rowCount).toBeGreaterThan(0);
  });

  it('records a successful sign-in as an AuditEvent of the user, with the client address', async () => {
    const pkce = pkcePair();
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      headers: { 'x-forwarded-for': '192.0.2.77' },
      payload: {
        email: t.testProject.email,
        password: t.testProject.password,
        codeChallenge: pkce.challenge,
        codeChallengeMethod: 'S256',
      },
    });
    expect(login.json().code).toBeTruthy();
    const audits = await t.pool.query<{ content: string; project_id: string }>(
      `SELECT content, project_id FROM "AuditEvent" WHERE content LIKE '%"outcome":"0"%' AND content LIKE $1`,
      [`%User/${t.testProject.user.id}%192.0.2.77%`],
    );
    // The authentication (server-wide), and the sign-in to the project, which its admins can read.
    expect(audits.rows.map((r) => r.project_id).sort()).toEqual(
      [t.services.superAdminProjectId, t.testProject.projectId].sort(),
    );
    for (const row of audits.rows) {
      const event = JSON.parse(row.content);
      expect(event.type.code).toBe('110114');
      expect(event.subtype[0].code).toBe('110122');
      expect(event.agent[0].network.address).toBe('192.0.2.77');
    }
    const visible = await t.app.inject({
      url: `/fhir/R4/AuditEvent?outcome=0&_count=100`,
      headers: t.authHeaders,
    });
    expect(visible.body).toContain('192.0.2.77');
  });

  it('serves /auth/me for the token', async () => {
    const res = await t.app.inject({ url: '/auth/me', headers: t.authHeaders });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.project.id).toBe(t.testProject.projectId);
    expect(body.membership.admin).toBe(true);
    expect(body.profile.resourceType).toBe('Practitioner');
    expect(body.config.resourceType).toBe('UserConfiguration');
  });

  it('is also served under /api/', async () => {
    const res = await t.app.inject({ url: '/api/auth/me', headers: t.authHeaders });
    expect(res.statusCode).toBe(200);
  });
});

describe('PKCE', () => {
  async function codeFor(challenge: string, method: string): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: {
        email: t.testProject.email,
        password: t.testProject.password,
        codeChallenge: challenge,
        codeChallengeMethod: method,
      },
    });
    expect(res.statusCode).toBe(200);
    return res.json().code;
  }

  it('accepts S256 and plain with the right verifier', async () => {
    const s = pkcePair();
    const ok = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({
        grant_type: 'authorization_code',
        code: await codeFor(s.challenge, 'S256'),
        code_verifier: s.verifier,
      }),
    });
    expect(ok.statusCode).toBe(200);
    const plain = 'p'.repeat(50);
    const ok2 = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'authorization_code', code: await codeFor(plain, 'plain'), code_verifier: plain }),
    });
    expect(ok2.statusCode).toBe(200);
  });

  it('rejects a missing or wrong verifier, and a reused code', async () => {
    const s = pkcePair();
    const code = await codeFor(s.challenge, 'S256');
    const missing = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'authorization_code', code }),
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toBe('invalid_request');
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'authorization_code', code, code_verifier: pkcePair().verifier }),
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toBe('invalid_grant');
    expect(wrong.json().resourceType).toBe('OperationOutcome');
    const good = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'authorization_code', code, code_verifier: s.verifier }),
    });
    expect(good.statusCode).toBe(200);
    const again = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'authorization_code', code, code_verifier: s.verifier }),
    });
    expect(again.statusCode).toBe(400);
    // Reusing a code revokes what it granted.
    const me = await t.app.inject({
      url: '/auth/me',
      headers: { authorization: `Bearer ${good.json().access_token}` },
    });
    expect(me.statusCode).toBe(401);
  });

  it('refuses an unknown method, a short S256 challenge and a wrong plain verifier', async () => {
    const login = (codeChallenge: string, codeChallengeMethod: string) =>
      t.app.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email: t.testProject.email, password: t.testProject.password, codeChallenge, codeChallengeMethod },
      });
    const unknown = await login(pkcePair().challenge, 'S512');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().resourceType).toBe('OperationOutcome');
    expect((await login('short', 'S256')).statusCode).toBe(400);
    const plain = 'q'.repeat(60);
    const code = await codeFor(plain, 'plain');
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'authorization_code', code, code_verifier: 'r'.repeat(60) }),
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toBe('invalid_grant');
  });

  it('rejects a plain verifier against an S256 challenge', async () => {
    const s = pkcePair();
    const code = await codeFor(s.challenge, 'S256');
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'authorization_code', code, code_verifier: s.challenge }),
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('tokens', () => {
  it('401 without a token, with a tampered token, or an ID token', async () => {
    const none = await t.app.inject({ url: '/fhir/R4/Patient' });
    expect(none.statusCode).toBe(401);
    expect(none.json().resourceType).toBe('OperationOutcome');
    const [h, p, s] = t.token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.login_id = payload.login_id.replace(/.$/, (c: string) => (c === '0' ? '1' : '0'));
    const tampered = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expect(
      (await t.app.inject({ url: '/fhir/R4/Patient', headers: { authorization: `Bearer ${tampered}` } })).statusCode,
    ).toBe(401);
    const id = await t.app.inject({
      url: '/fhir/R4/Patient',
      headers: { authorization: `Bearer ${t.testProject.tokens.id_token}` },
    });
    expect(id.statusCode).toBe(401);
    const refresh = await t.app.inject({
      url: '/fhir/R4/Patient',
      headers: { authorization: `Bearer ${t.testProject.tokens.refresh_token}` },
    });
    expect(refresh.statusCode).toBe(401);
  });

  it('401 for an expired token', async () => {
    const expired = await t.services.auth.keys.sign(
      { login_id: decodeJwt(t.token).login_id, sub: decodeJwt(t.token).sub, scope: 'openid', profile: 'x' },
      -10,
      'at+jwt',
    );
    const res = await t.app.inject({ url: '/fhir/R4/Patient', headers: { authorization: `Bearer ${expired}` } });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('expired');
  });

  it('keeps metadata and discovery public', async () => {
    expect((await t.app.inject({ url: '/.well-known/openid-configuration' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/.well-known/smart-configuration' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/fhir/R4/.well-known/smart-configuration' })).statusCode).toBe(200);
    const jwks = (await t.app.inject({ url: '/.well-known/jwks.json' })).json();
    expect(jwks.keys[0].kty).toBe('EC');
    expect(jwks.keys[0].d).toBeUndefined();
    expect((await t.app.inject({ url: '/healthcheck' })).statusCode).toBe(200);
  });

  it('creates and reads with the token, in its own project', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Patient', name: [{ family: 'Token' }] },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().meta.project).toBe(t.testProject.projectId);
    expect(created.json().meta.author.reference).toBe(t.testProject.tokens.profile.reference);
  });
});

describe('memberships', () => {
  it('a user is admin in one project and a plain member of another, by the profile signed in with', async () => {
    const other = await createTestProject(t.app, t.services, 'Second project');
    // The test project's admin joins the second project as a member who is not an admin.
    const invite = await t.app.inject({
      method: 'POST',
      url: `/admin/projects/${other.projectId}/invite`,
      headers: other.headers,
      payload: {
        resourceType: 'Practitioner',
        firstName: 'Test',
        lastName: 'Admin',
        email: t.testProject.email,
        sendEmail: false,
      },
    });
    expect(invite.statusCode).toBe(200);
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: {
        email: t.testProject.email,
        password: t.testProject.password,
        codeChallenge: pkcePair().challenge,
        codeChallengeMethod: 'S256',
      },
    });
    const memberships = login.json().memberships as {
      project: { reference: string; display?: string };
      profile: { display?: string };
    }[];
    const projects = memberships.map((m) => m.project.reference);
    expect(projects.sort()).toEqual([`Project/${t.testProject.projectId}`, `Project/${other.projectId}`].sort());
    // The choice names each project (and the profile), so that a person tells them apart.
    const second = memberships.find((m) => m.project.reference === `Project/${other.projectId}`);
    expect(second?.project.display).toBe('Second project');
    expect(second?.profile.display).toBe('Test Admin');
    const asMember = await signIn(t.app, t.testProject.email, t.testProject.password, { profileId: invite.json().id });
    const headers = { authorization: `Bearer ${asMember.access_token}` };
    expect(asMember.project.reference).toBe(`Project/${other.projectId}`);
    expect((await t.app.inject({ url: `/admin/projects/${other.projectId}`, headers })).statusCode).toBe(403);
    expect((await t.app.inject({ url: `/admin/projects/${t.testProject.projectId}`, headers })).statusCode).toBe(403);
    expect(
      (await t.app.inject({ url: `/admin/projects/${t.testProject.projectId}`, headers: t.authHeaders })).statusCode,
    ).toBe(200);
    // A projectId in the sign-in picks that project's membership directly.
    const direct = await signIn(t.app, t.testProject.email, t.testProject.password, { projectId: other.projectId });
    expect(direct.profile.reference).toBe(asMember.profile.reference);
  });

  it('an inactive client application cannot sign in, by credentials or for a user', async () => {
    const client = (
      await t.app.inject({
        method: 'POST',
        url: `/admin/projects/${t.testProject.projectId}/client`,
        headers: t.authHeaders,
        payload: { name: 'Retired' },
      })
    ).json();
    await t.services.systemRepo(t.testProject.projectId).updateResource({ ...client, status: 'off' });
    const credentials = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }),
    });
    expect(credentials.statusCode).toBe(401);
    expect(credentials.json().error).toBe('invalid_client');
    const forUser = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: t.testProject.email, password: t.testProject.password, clientId: client.id },
    });
    expect(forUser.statusCode).toBe(403);
    expect(forUser.json().resourceType).toBe('OperationOutcome');
  });
});

describe('remember', () => {
  it("a third-party client's sign-in gets a refresh token only with remember or offline_access", async () => {
    const client = (
      await t.app.inject({
        method: 'POST',
        url: `/admin/projects/${t.testProject.projectId}/client`,
        headers: t.authHeaders,
        payload: { name: 'Third party' },
      })
    ).json();
    const tokensWith = async (extra: Record<string, unknown>) =>
      signIn(t.app, t.testProject.email, t.testProject.password, { clientId: client.id, ...extra });
    expect((await tokensWith({})).refresh_token).toBeUndefined();
    expect((await tokensWith({ remember: true })).refresh_token).toBeTruthy();
    expect((await tokensWith({ scope: 'openid offline_access' })).refresh_token).toBeTruthy();
    // First-party sign-ins (the web app, no client) always may refresh.
    expect((await signIn(t.app, t.testProject.email, t.testProject.password)).refresh_token).toBeTruthy();
  });
});

describe('refresh tokens', () => {
  it('rotates on each use; reusing an old one revokes the chain', async () => {
    const tokens = await signIn(t.app, t.testProject.email, t.testProject.password);
    const first = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }),
    });
    expect(first.statusCode).toBe(200);
    const rotated = first.json();
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    const second = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'refresh_token', refresh_token: rotated.refresh_token }),
    });
    expect(second.statusCode).toBe(200);
    // The first refresh token again, long after its rotation: reuse.
    await t.pool.query(
      `UPDATE "Login" SET content = replace(content, to_char(now() at time zone 'utc', 'YYYY-MM-DD'), '2000-01-01') WHERE id = $1`,
      [decodeJwt(tokens.access_token).login_id],
    );
    t.services.auth.authenticator.invalidate();
    const reuse = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }),
    });
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json().error).toBe('invalid_grant');
    // The whole chain is revoked: the newest refresh and access tokens too.
    const latest = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      ...form({ grant_type: 'refresh_token', refresh_token: second.json().refresh_token }),
    });
    expect(latest.statusCode).toBe(400);
    const me = await t.app.inject({
      url: '/auth/me',
      headers: { authorization: `Bearer ${second.json().access_token}` },
    });
    expect(me.statusCode).toBe(401);
  });

  it('logout revokes the login', async () => {
    const tokens = await signIn(t.app, t.testProject.email, t.testProject.password);
    const headers = { authorization: `Bearer ${tokens.access_token}` };
    expect((await t.app.inject({ method: 'POST', url: '/oauth2/logout', headers })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/auth/me', headers })).statusCode).toBe(401);
  });
});
