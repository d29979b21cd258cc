import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject, formPost as postForm, pkcePair, signIn } from '../test/auth.js';
import { emailText, startTestSmtpServer, type TestSmtpServer } from '../test/smtp.js';
import { freshTotp } from '../test/totp.js';
import { findUserByEmail } from './store.js';

let t: TestApp;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  t = await createTestApp({
    config: { smtpHost: '127.0.0.1', smtpPort: smtp.port, appBaseUrl: 'https://app.example.org/' },
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const json = (method: 'POST' | 'GET', url: string, payload?: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url, payload, headers });

async function register(email: string, password = 'correct horse battery') {
  const pkce = pkcePair();
  const res = await json('POST', '/auth/newuser', {
    firstName: 'Reg',
    lastName: 'Istered',
    email,
    password,
    codeChallenge: pkce.challenge,
    codeChallengeMethod: 'S256',
  });
  return { res, pkce };
}

describe('registration', () => {
  it('newuser then newproject gives a code for the new project admin', async () => {
    const { res, pkce } = await register('new.user@example.com');
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json())).toEqual(['login']);
    const project = await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'My Clinic' });
    expect(project.statusCode).toBe(200);
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=authorization_code&code=${project.json().code}&code_verifier=${pkce.verifier}`,
    });
    expect(token.statusCode).toBe(200);
    const me = await json('GET', '/auth/me', undefined, { authorization: `Bearer ${token.json().access_token}` });
    expect(me.json().project.name).toBe('My Clinic');
    expect(me.json().membership.admin).toBe(true);
  });

  it('refuses a taken email, a weak password, and a bad email', async () => {
    expect((await register('new.user@example.com')).res.statusCode).toBe(409);
    expect((await register('weak@example.com', 'short')).res.statusCode).toBe(400);
    expect((await register('not-an-email')).res.statusCode).toBe(400);
  });

  it('is switched off by config', async () => {
    const closed = await createTestApp({ db: t.db, config: { registrationEnabled: false } });
    try {
      const res = await closed.app.inject({
        method: 'POST',
        url: '/auth/newuser',
        payload: { firstName: 'a', lastName: 'b', email: 'x@example.com', password: 'long enough pw' },
      });
      expect(res.statusCode).toBe(403);
    } finally {
      await closed.close();
    }
  });
});

describe('patient registration', () => {
  it('a project with a default patient policy takes patients, who see only their own compartment', async () => {
    const FHIR = { ...t.authHeaders, 'content-type': 'application/fhir+json' };
    const policy = (
      await t.app.inject({
        method: 'POST',
        url: '/fhir/R4/AccessPolicy',
        headers: FHIR,
        payload: {
          resourceType: 'AccessPolicy',
          compartment: { reference: '%patient' },
          resource: [{ resourceType: 'Patient' }, { resourceType: 'Observation' }],
        },
      })
    ).json();
    const stranger = (
      await t.app.inject({
        method: 'POST',
        url: '/fhir/R4/Patient',
        headers: FHIR,
        payload: { resourceType: 'Patient' },
      })
    ).json();
    const projectId = t.testProject.projectId;
    const newpatient = async (email: string, project = projectId) => {
      const pkce = pkcePair();
      const user = await json('POST', '/auth/newuser', {
        firstName: 'Pat',
        lastName: 'Ient',
        email,
        password: 'patient password',
        projectId: project,
        codeChallenge: pkce.challenge,
        codeChallengeMethod: 'S256',
      });
      if (user.statusCode !== 200) {
        return { user, patient: undefined, pkce };
      }
      const patient = await json('POST', '/auth/newpatient', { login: user.json().login, projectId: project });
      return { user, patient, pkce };
    };
    // Not open yet: no default patient policy.
    expect((await newpatient('early.patient@example.com')).user.statusCode).toBe(403);

    const project = (await t.app.inject({ url: `/fhir/R4/Project/${projectId}`, headers: t.authHeaders })).json();
    const opened = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Project/${projectId}`,
      headers: FHIR,
      payload: { ...project, defaultPatientAccessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    expect(opened.statusCode).toBe(200);

    const { patient, pkce } = await newpatient('self.registered@example.com');
    expect(patient?.statusCode).toBe(200);
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=authorization_code&code=${patient?.json().code}&code_verifier=${pkce.verifier}`,
    });
    expect(token.statusCode).toBe(200);
    expect(token.json().profile.reference).toMatch(/^Patient\//);
    const headers = { authorization: `Bearer ${token.json().access_token}` };
    const own = token.json().profile.reference;
    expect((await json('GET', `/fhir/R4/${own}`, undefined, headers)).statusCode).toBe(200);
    expect((await json('GET', `/fhir/R4/Patient/${stranger.id}`, undefined, headers)).statusCode).toBe(404);
    const everyone = (await json('GET', '/fhir/R4/Patient', undefined, headers)).json();
    expect(everyone.entry.map((e: { resource: { id: string } }) => `Patient/${e.resource.id}`)).toEqual([own]);
    expect((await json('GET', '/fhir/R4/Practitioner', undefined, headers)).statusCode).toBe(403);

    // With registration off server-wide, the open project still takes patients; new projects are refused.
    const closed = await createTestApp({ db: t.db, config: { registrationEnabled: false } });
    try {
      const pk = pkcePair();
      const user = await closed.app.inject({
        method: 'POST',
        url: '/auth/newuser',
        payload: {
          firstName: 'Late',
          lastName: 'Patient',
          email: 'late.patient@example.com',
          password: 'patient password',
          projectId,
          codeChallenge: pk.challenge,
          codeChallengeMethod: 'S256',
        },
      });
      expect(user.statusCode).toBe(200);
      const asProject = await closed.app.inject({
        method: 'POST',
        url: '/auth/newproject',
        payload: { login: user.json().login, projectName: 'Sneaky' },
      });
      expect(asProject.statusCode).toBe(403);
      const asPatient = await closed.app.inject({
        method: 'POST',
        url: '/auth/newpatient',
        payload: { login: user.json().login, projectId },
      });
      expect(asPatient.statusCode).toBe(200);
      expect(asPatient.json().code).toBeTruthy();
    } finally {
      await closed.close();
    }

    // A patient registered for this project cannot join another open project with that user.
    const other = await createTestProject(t.app, t.services, 'Other open project');
    const otherHeaders = { ...other.headers, 'content-type': 'application/fhir+json' };
    const otherPolicy = (
      await t.app.inject({
        method: 'POST',
        url: '/fhir/R4/AccessPolicy',
        headers: otherHeaders,
        payload: { resourceType: 'AccessPolicy', resource: [{ resourceType: 'Patient' }] },
      })
    ).json();
    await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Project/${other.projectId}`,
      headers: otherHeaders,
      payload: { ...other.project, defaultPatientAccessPolicy: { reference: `AccessPolicy/${otherPolicy.id}` } },
    });
    const pk = pkcePair();
    const login = await json('POST', '/auth/login', {
      email: 'self.registered@example.com',
      password: 'patient password',
      projectId,
      codeChallenge: pk.challenge,
      codeChallengeMethod: 'S256',
    });
    const hop = await json('POST', '/auth/newpatient', { login: login.json().login, projectId: other.projectId });
    expect(hop.statusCode).toBe(403);
    expect(hop.json().resourceType).toBe('OperationOutcome');
  });
});

describe('Project/$init', () => {
  it('creates a project owned by the caller, who becomes its admin', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Project/$init',
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Parameters', parameter: [{ name: 'name', valueString: 'Second Project' }] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('Second Project');
    const tokens = await signIn(t.app, t.testProject.email, t.testProject.password, { projectId: res.json().id });
    expect(tokens.project.reference).toBe(`Project/${res.json().id}`);
  });

  it('lets a super admin create a project for a new owner named by email', async () => {
    const admin = await signIn(t.app, t.superAdmin.email, t.superAdmin.password);
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Project/$init',
      headers: { authorization: `Bearer ${admin.access_token}`, 'content-type': 'application/fhir+json' },
      payload: {
        resourceType: 'Parameters',
        parameter: [
          { name: 'name', valueString: 'For Jane' },
          { name: 'ownerEmail', valueString: 'jane.doe@example.com' },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const owner = await findUserByEmail(t.services.auth.deps.pool, 'jane.doe@example.com');
    expect(owner).toMatchObject({ firstName: 'Jane', lastName: 'Doe' });
  });

  it('lets only super admins name another owner', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Project/$init',
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: {
        resourceType: 'Parameters',
        parameter: [
          { name: 'name', valueString: 'X' },
          { name: 'ownerEmail', valueString: 'other@example.com' },
        ],
      },
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('passwords', () => {
  it('changes a password with the old one', async () => {
    const { res } = await register('changer@example.com', 'first password 1');
    await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'P' });
    const tokens = await signIn(t.app, 'changer@example.com', 'first password 1');
    const headers = { authorization: `Bearer ${tokens.access_token}` };
    expect(
      (
        await json(
          'POST',
          '/auth/changepassword',
          { oldPassword: 'wrong one!!', newPassword: 'second password 2' },
          headers,
        )
      ).statusCode,
    ).toBe(400);
    expect(
      (
        await json(
          'POST',
          '/auth/changepassword',
          { oldPassword: 'first password 1', newPassword: 'second password 2' },
          headers,
        )
      ).statusCode,
    ).toBe(200);
    await expect(signIn(t.app, 'changer@example.com', 'first password 1')).rejects.toThrow();
    expect((await signIn(t.app, 'changer@example.com', 'second password 2')).access_token).toBeTruthy();
  });

  it('resets by email: the link sets a new password once', async () => {
    const unknown = await json('POST', '/auth/resetpassword', { email: 'nobody@example.com' });
    expect(unknown.statusCode).toBe(200);
    const res = await json('POST', '/auth/resetpassword', { email: t.testProject.email });
    expect(res.statusCode).toBe(200);
    const mail = await smtp.waitFor(t.testProject.email);
    const match = /https:\/\/app\.example\.org\/setpassword\/([\w-]+)\/([\w-]+)/.exec(emailText(mail.raw));
    expect(match).not.toBeNull();
    const [, id, secret] = match as RegExpExecArray;
    expect(
      (await json('POST', '/auth/setpassword', { id, secret: secret + 'x', password: 'brand new password' }))
        .statusCode,
    ).toBe(400);
    expect((await json('POST', '/auth/setpassword', { id, secret, password: 'brand new password' })).statusCode).toBe(
      200,
    );
    expect((await json('POST', '/auth/setpassword', { id, secret, password: 'another new password' })).statusCode).toBe(
      400,
    );
    expect((await signIn(t.app, t.testProject.email, 'brand new password')).access_token).toBeTruthy();
    t.testProject.password = 'brand new password';
  });
});

describe('TOTP second factor', () => {
  it('enrols, then asks for a code at sign-in; wrong codes fail and five revoke the sign-in', async () => {
    const { res } = await register('mfa.user@example.com', 'mfa user password');
    await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'MFA' });
    const tokens = await signIn(t.app, 'mfa.user@example.com', 'mfa user password');
    const headers = { authorization: `Bearer ${tokens.access_token}` };
    const status = (await json('GET', '/auth/mfa/status', undefined, headers)).json();
    expect(status.enrolled).toBe(false);
    expect(status.enrollQrCode).toMatch(/^data:image\/png;base64,/);
    const secret = new URL(status.enrollUri).searchParams.get('secret') as string;
    expect((await json('POST', '/auth/mfa/enroll', { token: '000000' }, headers)).statusCode).toBe(400);
    expect((await json('POST', '/auth/mfa/enroll', { token: await freshTotp(secret) }, headers)).statusCode).toBe(200);

    const pkce = pkcePair();
    const login = await json('POST', '/auth/login', {
      email: 'mfa.user@example.com',
      password: 'mfa user password',
      codeChallenge: pkce.challenge,
      codeChallengeMethod: 'S256',
    });
    expect(login.json()).toEqual({ login: login.json().login, mfaRequired: true });
    const verified = await json('POST', '/auth/mfa/verify', {
      login: login.json().login,
      token: await freshTotp(secret),
    });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().code).toBeTruthy();

    const again = await json('POST', '/auth/login', {
      email: 'mfa.user@example.com',
      password: 'mfa user password',
      codeChallenge: pkce.challenge,
      codeChallengeMethod: 'S256',
    });
    for (let i = 0; i < 5; i++) {
      expect((await json('POST', '/auth/mfa/verify', { login: again.json().login, token: '000000' })).statusCode).toBe(
        400,
      );
    }
    const late = await json('POST', '/auth/mfa/verify', {
      login: again.json().login,
      token: await freshTotp(secret),
    });
    expect(late.statusCode).toBe(400);
    // Each wrong code is a failed sign-in in the audit trail; the fifth revoked the sign-in.
    const audits = await t.pool.query<{ content: string }>(
      `SELECT content FROM "AuditEvent" WHERE content LIKE '%"display":"mfa"%' AND content LIKE '%mfa.user@example.com%'`,
    );
    const reasons = audits.rows.map((r) => JSON.parse(r.content).outcomeDesc as string);
    expect(reasons.length).toBe(5);
    expect(reasons.filter((r) => r.includes('revoked')).length).toBe(1);
  });

  it('accepts each code once: the same code replayed within its 30 s is refused (RFC 6238, 5.2)', async () => {
    const { res } = await register('mfa.replay@example.com', 'mfa replay password');
    await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'MFA replay' });
    const tokens = await signIn(t.app, 'mfa.replay@example.com', 'mfa replay password');
    const headers = { authorization: `Bearer ${tokens.access_token}` };
    const status = (await json('GET', '/auth/mfa/status', undefined, headers)).json();
    const secret = new URL(status.enrollUri).searchParams.get('secret') as string;
    expect((await json('POST', '/auth/mfa/enroll', { token: await freshTotp(secret) }, headers)).statusCode).toBe(200);

    const startLogin = async () =>
      (
        await json('POST', '/auth/login', {
          email: 'mfa.replay@example.com',
          password: 'mfa replay password',
          codeChallenge: pkcePair().challenge,
          codeChallengeMethod: 'S256',
        })
      ).json().login as string;
    const code = await freshTotp(secret);
    expect((await json('POST', '/auth/mfa/verify', { login: await startLogin(), token: code })).statusCode).toBe(200);
    const replayed = await json('POST', '/auth/mfa/verify', { login: await startLogin(), token: code });
    expect(replayed.statusCode).toBe(400);
    expect(replayed.json().issue[0].details.text).toBe('Invalid MFA token');
    // Another valid code (the next time step's) still works.
    const next = await json('POST', '/auth/mfa/verify', { login: await startLogin(), token: await freshTotp(secret) });
    expect(next.statusCode).toBe(200);
  });

  it('disables the second factor with a valid code only', async () => {
    const { res } = await register('mfa.off@example.com', 'mfa off password');
    await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'MFA off' });
    const tokens = await signIn(t.app, 'mfa.off@example.com', 'mfa off password');
    const headers = { authorization: `Bearer ${tokens.access_token}` };
    const status = (await json('GET', '/auth/mfa/status', undefined, headers)).json();
    const secret = new URL(status.enrollUri).searchParams.get('secret') as string;
    expect((await json('POST', '/auth/mfa/disable', { token: '123456' }, headers)).statusCode).toBe(400);
    await json('POST', '/auth/mfa/enroll', { token: await freshTotp(secret) }, headers);
    expect((await json('GET', '/auth/me', undefined, headers)).json().security.mfaEnrolled).toBe(true);
    expect((await json('POST', '/auth/mfa/disable', { token: 'abcdef' }, headers)).statusCode).toBe(400);
    expect((await json('POST', '/auth/mfa/disable', { token: await freshTotp(secret) }, headers)).statusCode).toBe(200);
    // Signing in needs no second factor any more.
    const again = await signIn(t.app, 'mfa.off@example.com', 'mfa off password');
    expect(again.access_token).toBeTruthy();
  });

  it('a project can require a second factor of its members', async () => {
    const { res } = await register('enrol.me@example.com', 'enrol me password');
    const project = (await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'Strict' })).json();
    expect(project.code).toBeTruthy();
    const me = (
      await json('GET', '/auth/me', undefined, {
        authorization: `Bearer ${(await signIn(t.app, 'enrol.me@example.com', 'enrol me password')).access_token}`,
      })
    ).json();
    const repo = t.services.systemRepo(me.project.id);
    await repo.updateResource({ ...me.project, setting: [{ name: 'mfaRequired', valueBoolean: true }] });
    const pkce = pkcePair();
    const login = await json('POST', '/auth/login', {
      email: 'enrol.me@example.com',
      password: 'enrol me password',
      codeChallenge: pkce.challenge,
      codeChallengeMethod: 'S256',
    });
    expect(login.json().mfaEnrollRequired).toBe(true);
    const secret = new URL(login.json().enrollUri).searchParams.get('secret') as string;
    // The QR code an app shows in an <img>: a PNG data URL.
    const qr = login.json().enrollQrCode as string;
    expect(qr.startsWith('data:image/png;base64,')).toBe(true);
    const png = Buffer.from(qr.slice('data:image/png;base64,'.length), 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    const enrolled = await json('POST', '/auth/mfa/login-enroll', {
      login: login.json().login,
      token: await freshTotp(secret),
    });
    expect(enrolled.json().code).toBeTruthy();
  });

  it('the browser sign-in page enrols a member of a project that requires it, then redirects with a code', async () => {
    const { res } = await register('browser.enrol@example.com', 'browser enrol password');
    await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'Strict browser' });
    const tokens = await signIn(t.app, 'browser.enrol@example.com', 'browser enrol password');
    const headers = { authorization: `Bearer ${tokens.access_token}` };
    const me = (await json('GET', '/auth/me', undefined, headers)).json();
    const redirectUri = 'https://strict.example/cb';
    const client = (
      await json('POST', `/admin/projects/${me.project.id}/client`, { name: 'Strict app', redirectUri }, headers)
    ).json();
    await t.services
      .systemRepo(me.project.id)
      .updateResource({ ...me.project, setting: [{ name: 'mfaRequired', valueBoolean: true }] });
    const pkce = pkcePair();
    const carried = {
      response_type: 'code',
      client_id: client.id,
      redirect_uri: redirectUri,
      state: 'st',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    };
    const formPost = (url: string, fields: Record<string, string>) => postForm(t.app, url, fields);
    const page = await formPost('/oauth2/authorize', {
      ...carried,
      email: 'browser.enrol@example.com',
      password: 'browser enrol password',
    });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain('img-src data:');
    const html = page.body;
    expect(html).toContain('<img src="data:image/png;base64,');
    const secret = /<code>([A-Z2-7]+)<\/code>/.exec(html)?.[1] as string;
    const login = /name="login" value="([^"]+)"/.exec(html)?.[1] as string;
    expect(/name="enroll" value="1"/.test(html)).toBe(true);
    const wrong = await formPost('/oauth2/authorize/mfa', { ...carried, login, enroll: '1', token: '000000' });
    expect(wrong.statusCode).toBe(400);
    const done = await formPost('/oauth2/authorize/mfa', {
      ...carried,
      login,
      enroll: '1',
      token: await freshTotp(secret),
    });
    expect(done.statusCode).toBe(302);
    const location = new URL(done.headers.location as string);
    expect(location.searchParams.get('state')).toBe('st');
    expect(location.searchParams.get('code')).toBeTruthy();
    // Enrolled now: the next sign-in asks for a code, not for enrolment.
    expect((await json('GET', '/auth/mfa/status', undefined, headers)).json().enrolled).toBe(true);
  });
});

describe('brute force', () => {
  it('locks an account after too many failures, for everyone', async () => {
    const { res } = await register('target@example.com', 'target password 1');
    await json('POST', '/auth/newproject', { login: res.json().login, projectName: 'T' });
    for (let i = 0; i < t.config.loginFailuresPerAccount; i++) {
      await json('POST', '/auth/login', { email: 'target@example.com', password: `guess ${i}` });
    }
    const locked = await json('POST', '/auth/login', { email: 'target@example.com', password: 'target password 1' });
    expect(locked.statusCode).toBe(429);
    expect(locked.json().resourceType).toBe('OperationOutcome');
  });
});
