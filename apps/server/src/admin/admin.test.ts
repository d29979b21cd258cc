import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, createTestProject, signIn, type TestProject } from '../test/auth.js';
import { emailText, startTestSmtpServer, type TestSmtpServer } from '../test/smtp.js';

let t: TestApp;
let smtp: TestSmtpServer;
let other: TestProject;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  t = await createTestApp({ config: { smtpHost: '127.0.0.1', smtpPort: smtp.port } });
  other = await createTestProject(t.app, t.services, 'Other');
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const pid = () => t.testProject.projectId;
const call = (
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = t.authHeaders,
) => t.app.inject({ method, url, payload: payload as object, headers });

describe('project admin', () => {
  it('shows the project with members, clients and bots', async () => {
    const res = await call('GET', `/admin/projects/${pid()}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.project.id).toBe(pid());
    expect(body.members.some((m: { admin: boolean }) => m.admin)).toBe(true);
    expect(body.clients.length).toBeGreaterThan(0);
  });

  it('invites a new user by email, who sets a password from the link and signs in', async () => {
    const res = await call('POST', `/admin/projects/${pid()}/invite`, {
      resourceType: 'Practitioner',
      firstName: 'Ivy',
      lastName: 'Invited',
      email: 'ivy@example.com',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().resourceType).toBe('ProjectMembership');
    expect(res.json().profile.reference).toMatch(/^Practitioner\//);
    const membershipId = res.json().id as string;
    const isPending = async () =>
      (await call('GET', `/admin/projects/${pid()}`)).json().members.find((m: { id: string }) => m.id === membershipId)
        .invited;
    // Pending until the invited user sets a password.
    expect(await isPending()).toBe(true);
    const mail = await smtp.waitFor('ivy@example.com');
    const [, id, secret] = /\/setpassword\/([\w-]+)\/([\w-]+)/.exec(emailText(mail.raw)) as RegExpExecArray;
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/auth/setpassword',
          payload: { id, secret, password: 'ivy has a password' },
        })
      ).statusCode,
    ).toBe(200);
    expect(await isPending()).toBe(false);
    const tokens = await signIn(t.app, 'ivy@example.com', 'ivy has a password');
    expect(tokens.project.reference).toBe(`Project/${pid()}`);
    // Inviting the same person again is a conflict.
    expect(
      (
        await call('POST', `/admin/projects/${pid()}/invite`, {
          firstName: 'Ivy',
          lastName: 'Invited',
          email: 'ivy@example.com',
        })
      ).statusCode,
    ).toBe(409);
  });

  it('invites an existing user of another project with a password and an access policy', async () => {
    const policy = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/AccessPolicy',
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'AccessPolicy', resource: [{ resourceType: 'Patient', readonly: true }] },
    });
    const res = await call('POST', `/admin/projects/${pid()}/invite`, {
      firstName: 'Other',
      lastName: 'Admin',
      email: other.email,
      sendEmail: false,
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.json().id}` } },
    });
    expect(res.statusCode).toBe(200);
    const tokens = await signIn(t.app, other.email, other.password, { projectId: pid() });
    const create = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Patient' },
    });
    expect(create.statusCode).toBe(403);
    // A policy of another project is refused.
    const foreign = await call('POST', `/admin/projects/${pid()}/invite`, {
      firstName: 'a',
      lastName: 'b',
      email: 'foreign@example.com',
      membership: { accessPolicy: { reference: 'AccessPolicy/00000000-0000-4000-8000-000000000000' } },
    });
    expect(foreign.statusCode).toBe(400);
  });

  it('creates a client with a secret that signs in with client credentials', async () => {
    const res = await call('POST', `/admin/projects/${pid()}/client`, { name: 'Integration', description: 'ETL' });
    expect(res.statusCode).toBe(201);
    const client = res.json();
    expect(client.secret).toBeTruthy();
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${client.id}&client_secret=${client.secret}`,
    });
    expect(token.statusCode).toBe(200);
    expect(token.json().project.reference).toBe(`Project/${pid()}`);
    expect(token.json().profile.reference).toBe(`ClientApplication/${client.id}`);
  });

  it('creates a bot with its membership', async () => {
    const res = await call('POST', `/admin/projects/${pid()}/bot`, { name: 'Echo', description: 'echoes' });
    expect(res.statusCode).toBe(201);
    expect(res.json().resourceType).toBe('Bot');
    const project = (await call('GET', `/admin/projects/${pid()}`)).json();
    expect(project.bots.map((b: { id: string }) => b.id)).toContain(res.json().id);
    expect(
      project.members.some((m: { profile: { reference: string } }) => m.profile.reference === `Bot/${res.json().id}`),
    ).toBe(true);
  });

  it('sets secrets and sites', async () => {
    const secrets = await call('POST', `/admin/projects/${pid()}/secrets`, [
      { name: 'API_KEY', valueString: 's3cr3t' },
    ]);
    expect(secrets.statusCode).toBe(200);
    expect(secrets.json().secret).toEqual([{ name: 'API_KEY', valueString: 's3cr3t' }]);
    const sites = await call('POST', `/admin/projects/${pid()}/sites`, [
      { name: 'main', domain: ['clinic.example.org'] },
    ]);
    expect(sites.json().site[0].domain).toEqual(['clinic.example.org']);
    expect((await call('POST', `/admin/projects/${pid()}/secrets`, { name: 'x' })).statusCode).toBe(400);
  });

  it('removes every secret and site with an empty list', async () => {
    await call('POST', `/admin/projects/${pid()}/secrets`, [{ name: 'GONE', valueString: 'soon' }]);
    await call('POST', `/admin/projects/${pid()}/sites`, [{ name: 'gone', domain: ['gone.example.org'] }]);
    const secrets = await call('POST', `/admin/projects/${pid()}/secrets`, []);
    expect(secrets.statusCode).toBe(200);
    expect(secrets.json().secret).toBeUndefined();
    const sites = await call('POST', `/admin/projects/${pid()}/sites`, []);
    expect(sites.statusCode).toBe(200);
    expect(sites.json().site).toBeUndefined();
  });

  it('reads, updates and removes members; the owner stays', async () => {
    const member = await addTestMember(t.app, t.services, pid());
    const url = `/admin/projects/${pid()}/members/${member.membership.id}`;
    expect((await call('GET', url)).json().id).toBe(member.membership.id);
    const updated = await call('POST', url, { admin: true });
    expect(updated.json().admin).toBe(true);
    expect(updated.json().project.reference).toBe(`Project/${pid()}`);
    expect((await call('DELETE', url)).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/auth/me', headers: member.headers })).statusCode).toBe(401);
    const owner = `/admin/projects/${pid()}/members/${t.testProject.membership.id}`;
    expect((await call('DELETE', owner)).statusCode).toBe(403);
    expect((await call('POST', owner, { admin: false })).statusCode).toBe(403);
  });

  it('keeps an admin from removing or demoting their own membership', async () => {
    const admin = await addTestMember(t.app, t.services, pid(), { membership: { admin: true } });
    const own = `/admin/projects/${pid()}/members/${admin.membership.id}`;
    for (const [method, payload] of [
      ['DELETE', undefined],
      ['POST', { admin: false }],
      ['POST', { active: false }],
    ] as const) {
      const res = await call(method, own, payload, admin.headers);
      expect(res.statusCode, `${method} ${JSON.stringify(payload)}`).toBe(403);
      expect(res.json().issue[0].details.text).toMatch(/your own/);
    }
    // Edits that keep them an active admin are theirs to make, and another admin may demote them.
    expect((await call('POST', own, { profile: { display: 'Self' } }, admin.headers)).json().profile.display).toBe(
      'Self',
    );
    expect((await call('POST', own, { admin: false })).json().admin).toBe(false);
    expect((await call('DELETE', own)).statusCode).toBe(200);
  });

  it('changes only the label of a profile, and rejects a malformed one', async () => {
    const member = await addTestMember(t.app, t.services, pid());
    const url = `/admin/projects/${pid()}/members/${member.membership.id}`;
    const before = member.membership.profile?.reference;
    const res = await call('POST', url, { profile: { reference: 'Patient/elsewhere', display: ' Dr Who ' } });
    expect(res.json().profile).toEqual({ reference: before, display: 'Dr Who' });
    expect((await call('POST', url, { profile: { display: '' } })).json().profile).toEqual({ reference: before });
    expect((await call('POST', url, { profile: { display: 7 } })).statusCode).toBe(400);
  });

  it('keeps one active admin in a project without an owner', async () => {
    const p = await createTestProject(t.app, t.services, 'Ownerless');
    const repo = t.services.auth.deps.systemRepo(p.projectId);
    const { owner: _owner, ...project } = p.project;
    await repo.updateResource(project);
    const superAdmin = await signIn(t.app, t.superAdmin.email, t.superAdmin.password);
    const headers = { authorization: `Bearer ${superAdmin.access_token}` };
    const only = `/admin/projects/${p.projectId}/members/${p.membership.id}`;
    const removed = await call('DELETE', only, undefined, headers);
    expect(removed.statusCode).toBe(403);
    expect(removed.json().issue[0].details.text).toMatch(/at least one active admin/);
    expect((await call('POST', only, { active: false }, headers)).statusCode).toBe(403);
    // With a second admin, the first may go.
    const second = await addTestMember(t.app, t.services, p.projectId, { membership: { admin: true } });
    expect((await call('DELETE', only, undefined, second.headers)).statusCode).toBe(200);
  });

  it('is closed to members who are not admins and to other projects', async () => {
    const member = await addTestMember(t.app, t.services, pid());
    for (const [method, url] of [
      ['GET', `/admin/projects/${pid()}`],
      ['POST', `/admin/projects/${pid()}/invite`],
      ['POST', `/admin/projects/${pid()}/client`],
      ['POST', `/admin/projects/${pid()}/bot`],
      ['POST', `/admin/projects/${pid()}/secrets`],
      ['POST', `/admin/projects/${pid()}/sites`],
      ['GET', `/admin/projects/${pid()}/members/${t.testProject.membership.id}`],
      ['DELETE', `/admin/projects/${pid()}/members/${t.testProject.membership.id}`],
      ['POST', '/admin/super/reindex'],
      ['GET', '/admin/super/stats'],
    ] as const) {
      const asMember = await call(
        method,
        url,
        { name: 'x', firstName: 'a', lastName: 'b', email: 'z@example.com' },
        member.headers,
      );
      expect(asMember.statusCode, `${method} ${url}`).toBe(403);
      const asOtherAdmin = await call(
        method,
        url,
        { name: 'x', firstName: 'a', lastName: 'b', email: 'z@example.com' },
        other.headers,
      );
      expect(asOtherAdmin.statusCode, `${method} ${url}`).toBe(403);
    }
    expect((await call('GET', `/admin/projects/${pid()}`, undefined, {})).statusCode).toBe(401);
    // And an admin cannot reach another project's members through its own project's path.
    expect((await call('GET', `/admin/projects/${pid()}/members/${other.membership.id}`)).statusCode).toBe(404);
  });
});

describe('super admin', () => {
  async function superHeaders() {
    const tokens = await signIn(t.app, t.superAdmin.email, t.superAdmin.password);
    return { authorization: `Bearer ${tokens.access_token}` };
  }

  it('reindexes, rebuilds value sets, sets passwords, purges, migrates and reports stats', async () => {
    const headers = await superHeaders();
    expect((await call('POST', '/admin/super/reindex', { resourceType: 'Patient' }, headers)).statusCode).toBe(200);
    expect((await call('POST', '/admin/super/reindex', { resourceType: 'Nope' }, headers)).statusCode).toBe(400);
    expect(
      (
        await call(
          'POST',
          '/admin/super/setpassword',
          { email: other.email, password: 'set by the super admin' },
          headers,
        )
      ).statusCode,
    ).toBe(200);
    expect((await signIn(t.app, other.email, 'set by the super admin')).access_token).toBeTruthy();
    const purge = await call('POST', '/admin/super/purge', { resourceType: 'Login', before: '2000-01-01' }, headers);
    expect(purge.statusCode).toBe(200);
    expect(
      (await call('POST', '/admin/super/purge', { resourceType: 'Patient', before: '2000-01-01' }, headers)).statusCode,
    ).toBe(400);
    expect((await call('POST', '/admin/super/migrate', {}, headers)).statusCode).toBe(200);
    const stats = await call('GET', '/admin/super/stats', undefined, headers);
    expect(stats.json().resources.Project).toBeGreaterThan(1);
    const projects = await call('GET', '/admin/super/projects', undefined, headers);
    expect(projects.json().length).toBeGreaterThan(1);
    // A super admin may administer any project.
    expect((await call('GET', `/admin/projects/${pid()}`, undefined, headers)).statusCode).toBe(200);
  });
});

describe('SCIM 2.0', () => {
  const scim = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    headers = t.authHeaders,
  ) =>
    t.app.inject({
      method,
      url,
      payload: payload as object,
      headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/scim+json' },
    });

  it('creates, lists with filters and paging, reads, replaces, patches and deletes users', async () => {
    const created = await scim('POST', '/scim/v2/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'sam.scim@example.com',
      name: { givenName: 'Sam', familyName: 'Scim' },
      externalId: 'okta-123',
    });
    expect(created.statusCode).toBe(201);
    const user = created.json();
    expect(user.userName).toBe('sam.scim@example.com');
    expect(user.active).toBe(true);
    expect(created.headers.location).toContain(`/scim/v2/Users/${user.id}`);
    for (let i = 0; i < 3; i++) {
      await scim('POST', '/scim/v2/Users', {
        userName: `bulk${i}@example.com`,
        name: { givenName: `Bulk${i}`, familyName: 'User' },
      });
    }
    const byName = await scim(
      'GET',
      '/scim/v2/Users?filter=' + encodeURIComponent('userName eq "SAM.scim@example.com"'),
    );
    expect(byName.json().totalResults).toBe(1);
    expect(byName.json().Resources[0].id).toBe(user.id);
    const bulk = await scim(
      'GET',
      '/scim/v2/Users?filter=' +
        encodeURIComponent('userName sw "bulk" and name.familyName eq "User"') +
        '&startIndex=2&count=1',
    );
    expect(bulk.json().totalResults).toBe(3);
    expect(bulk.json().itemsPerPage).toBe(1);
    expect(bulk.json().startIndex).toBe(2);
    const bad = await scim('GET', '/scim/v2/Users?filter=' + encodeURIComponent('userName zz "x"'));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().schemas).toContain('urn:ietf:params:scim:api:messages:2.0:Error');
    expect(bad.json().scimType).toBe('invalidFilter');

    expect((await scim('GET', `/scim/v2/Users/${user.id}`)).json().externalId).toBe('okta-123');
    const deactivated = await scim('PATCH', `/scim/v2/Users/${user.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(deactivated.json().active).toBe(false);
    const active = await scim('GET', '/scim/v2/Users?filter=' + encodeURIComponent('active eq false'));
    expect(active.json().Resources.map((u: { id: string }) => u.id)).toEqual([user.id]);
    const replaced = await scim('PUT', `/scim/v2/Users/${user.id}`, {
      userName: 'sam.scim@example.com',
      active: true,
      externalId: 'okta-456',
    });
    expect(replaced.json().active).toBe(true);
    expect(replaced.json().externalId).toBe('okta-456');
    expect((await scim('DELETE', `/scim/v2/Users/${user.id}`)).statusCode).toBe(204);
    expect((await scim('GET', `/scim/v2/Users/${user.id}`)).statusCode).toBe(404);
  });

  it('is per project and for admins only', async () => {
    const list = await scim('GET', '/scim/v2/Users', undefined, other.headers);
    expect(list.json().Resources.map((u: { userName: string }) => u.userName)).toEqual([other.email]);
    const member = await addTestMember(t.app, t.services, pid());
    expect((await scim('GET', '/scim/v2/Users', undefined, member.headers)).statusCode).toBe(403);
    const mine = (await scim('GET', '/scim/v2/Users')).json().Resources[0].id;
    expect((await scim('GET', `/scim/v2/Users/${mine}`, undefined, other.headers)).statusCode).toBe(404);
    expect((await scim('DELETE', `/scim/v2/Users/${mine}`, undefined, other.headers)).statusCode).toBe(404);
  });
});
