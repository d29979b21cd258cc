// The super admin endpoints (/admin/super/...): reindex (synchronous and as an AsyncJob with
// progress), migration status, purge, and their refusal to anyone but a super admin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, signIn } from '../test/auth.js';
import { migrations } from '../storage/migrations/index.js';

let t: TestApp;
let superHeaders: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  const tokens = await signIn(t.app, t.superAdmin.email, t.superAdmin.password);
  superHeaders = { authorization: `Bearer ${tokens.access_token}` };
});
afterAll(async () => {
  await t?.close();
});

const call = (
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = superHeaders,
) => t.app.inject({ method, url, payload: payload as object, headers });

async function createPatient(family: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/fhir/R4/Patient',
    headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
    payload: { resourceType: 'Patient', name: [{ family }] },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id;
}

async function searchByFamily(family: string): Promise<number> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/fhir/R4/Patient?family=${family}`,
    headers: t.authHeaders,
  });
  expect(res.statusCode).toBe(200);
  return res.json().entry?.length ?? 0;
}

async function stringRows(id: string): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM search_string WHERE resource_type = 'Patient' AND resource_id = $1`,
    [id],
  );
  return rows[0].n;
}

async function waitForJob(statusUrl: string): Promise<{ statusCode: number; body: Record<string, unknown> }> {
  const path = new URL(statusUrl).pathname;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await call('GET', path);
    if (res.statusCode !== 202 || Date.now() > deadline) {
      return { statusCode: res.statusCode, body: res.json() };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('reindex', () => {
  it('rebuilds missing index rows synchronously, without duplicating those that were there', async () => {
    const id = await createPatient('Reindexsync');
    const before = await stringRows(id);
    expect(before).toBeGreaterThan(0);
    await t.pool.query(`DELETE FROM search_string WHERE resource_type = 'Patient' AND resource_id = $1`, [id]);
    expect(await searchByFamily('Reindexsync')).toBe(0);
    const res = await call('POST', '/admin/super/reindex', { resourceType: 'Patient' });
    expect(res.statusCode).toBe(200);
    expect(res.json().issue[0].details.text).toMatch(/^Reindexed \d+ resources \(Patient \d+\)$/);
    expect(await searchByFamily('Reindexsync')).toBe(1);
    // A first version's rows are replaced, not added to.
    await call('POST', '/admin/super/reindex', { resourceType: 'Patient' });
    expect(await stringRows(id)).toBe(before);
  });

  it('runs as an AsyncJob with Prefer: respond-async, reporting the resources done of the total', async () => {
    const ids = [await createPatient('Reindexasync'), await createPatient('Reindexasync')];
    await t.pool.query(`DELETE FROM search_string WHERE resource_type = 'Patient' AND resource_id = ANY($1)`, [ids]);
    expect(await searchByFamily('Reindexasync')).toBe(0);
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/super/reindex',
      headers: { ...superHeaders, prefer: 'respond-async' },
      payload: { resourceType: 'Patient, Observation' },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ resourceType: 'AsyncJob', type: 'reindex' });
    const location = res.headers['content-location'] as string;
    expect(location).toMatch(/\/fhir\/R4\/job\/[^/]+\/status$/);
    const done = await waitForJob(location);
    expect(done.statusCode).toBe(200);
    expect(done.body.status).toBe('completed');
    const { rows } = await t.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM resource WHERE resource_type = 'Patient' AND NOT deleted`,
    );
    const parameter = (done.body.output as { parameter: { name: string; valueInteger?: number; part?: unknown }[] })
      .parameter;
    expect(parameter[0]).toEqual({ name: 'total', valueInteger: rows[0].n });
    // Observation has no resources here: only the types holding some are listed.
    expect(parameter.slice(1)).toEqual([
      {
        name: 'type',
        part: [
          { name: 'resourceType', valueCode: 'Patient' },
          { name: 'count', valueInteger: rows[0].n },
        ],
      },
    ]);
    expect(await searchByFamily('Reindexasync')).toBe(2);
  });

  it('reindexes every type when none is named', async () => {
    const id = await createPatient('Reindexall');
    await t.pool.query(`DELETE FROM search_string WHERE resource_type = 'Patient' AND resource_id = $1`, [id]);
    const res = await call('POST', '/admin/super/reindex', {});
    expect(res.statusCode).toBe(200);
    const text: string = res.json().issue[0].details.text;
    expect(text).toMatch(/Patient \d+/);
    expect(text).toMatch(/Project \d+/);
    expect(await searchByFamily('Reindexall')).toBe(1);
  });

  it('refuses types that are not stored, naming them', async () => {
    for (const resourceType of ['Nope', 'Patient,Nope', 7]) {
      const res = await call('POST', '/admin/super/reindex', { resourceType });
      expect(res.statusCode, String(resourceType)).toBe(400);
      expect(res.json().resourceType).toBe('OperationOutcome');
      expect(res.json().issue[0].expression).toEqual(['resourceType']);
    }
    expect(
      (await call('POST', '/admin/super/reindex', { resourceType: 'Patient,Nope' })).json().issue[0].details.text,
    ).toBe('Not a stored resource type: Nope');
  });
});

describe('migration status', () => {
  it('lists the applied migrations with their dates, and none pending', async () => {
    const res = await call('GET', '/admin/super/migrate');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pending).toEqual([]);
    expect(body.unknown).toEqual([]);
    expect(body.applied.map((m: { id: number }) => m.id)).toEqual(migrations.map((m) => m.id).sort((a, b) => a - b));
    expect(body.applied[0]).toMatchObject({ id: 1, name: migrations.find((m) => m.id === 1)?.name });
    expect(Number.isNaN(Date.parse(body.applied[0].appliedAt))).toBe(false);
  });

  it('shows a migration the database lacks as pending, and one it has that this version does not know', async () => {
    const last = [...migrations].sort((a, b) => b.id - a.id)[0];
    const { rows } = await t.pool.query<{ applied_at: Date }>('SELECT applied_at FROM hearth_migration WHERE id = $1', [
      last.id,
    ]);
    await t.pool.query('DELETE FROM hearth_migration WHERE id = $1', [last.id]);
    await t.pool.query(`INSERT INTO hearth_migration (id, name) VALUES (99999, 'from a newer version')`);
    try {
      const body = (await call('GET', '/admin/super/migrate')).json();
      expect(body.pending).toEqual([{ id: last.id, name: last.name }]);
      expect(body.unknown).toMatchObject([{ id: 99999, name: 'from a newer version' }]);
    } finally {
      await t.pool.query('DELETE FROM hearth_migration WHERE id = 99999');
      await t.pool.query('INSERT INTO hearth_migration (id, name, applied_at) VALUES ($1, $2, $3)', [
        last.id,
        last.name,
        rows[0].applied_at,
      ]);
    }
  });
});

describe('access', () => {
  it('refuses every super admin endpoint to a project admin and a member with 403, and anonymous callers with 401', async () => {
    const member = await addTestMember(t.app, t.services, t.testProject.projectId);
    const routes = [
      ['POST', '/admin/super/reindex'],
      ['POST', '/admin/super/valuesets'],
      ['POST', '/admin/super/setpassword'],
      ['POST', '/admin/super/purge'],
      ['POST', '/admin/super/migrate'],
      ['GET', '/admin/super/migrate'],
      ['GET', '/admin/super/stats'],
      ['GET', '/admin/super/projects'],
    ] as const;
    for (const [method, url] of routes) {
      for (const headers of [t.authHeaders, member.headers]) {
        const res = await call(method, url, method === 'POST' ? {} : undefined, headers);
        expect(res.statusCode, `${method} ${url}`).toBe(403);
        expect(res.json().issue[0].details.text).toBe('Only super admins may do this');
      }
      expect((await call(method, url, method === 'POST' ? {} : undefined, {})).statusCode).toBe(401);
    }
  });
});

// Last: purging sign-in records ends the sessions they hold (the project admin's among them).
describe('purge', () => {
  it('removes sign-in records older than the date, with their history and index rows, and keeps newer ones', async () => {
    await signIn(t.app, t.superAdmin.email, t.superAdmin.password);
    const count = async (sql: string) => (await t.pool.query<{ n: number }>(sql)).rows[0].n;
    const logins = () => count(`SELECT count(*)::int AS n FROM resource WHERE resource_type = 'Login'`);
    const all = await logins();
    expect(all).toBeGreaterThan(0);
    // Half of them made old.
    await t.pool.query(
      `UPDATE "Login" SET last_updated = '2001-01-01' WHERE id IN (SELECT id FROM "Login" ORDER BY id LIMIT $1)`,
      [Math.ceil(all / 2)],
    );
    await t.pool.query(
      `UPDATE "Login_History" SET last_updated = '2001-01-01' WHERE id IN (SELECT id FROM "Login" WHERE last_updated < '2002-01-01')`,
    );
    const oldIds = (
      await t.pool.query<{ id: string }>(`SELECT id FROM "Login" WHERE last_updated < '2002-01-01'`)
    ).rows.map((r) => r.id);
    const res = await call('POST', '/admin/super/purge', { resourceType: 'Login', before: '2002-01-01' });
    expect(res.statusCode).toBe(200);
    expect(res.json().issue[0].details.text).toBe(`Purged ${oldIds.length} Login`);
    expect(await logins()).toBe(all - oldIds.length);
    const left = await t.pool.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM "Login_History" WHERE id = ANY($1))::int
            + (SELECT count(*) FROM search_token WHERE resource_type = 'Login' AND resource_id = ANY($1))::int
            + (SELECT count(*) FROM search_reference WHERE resource_type = 'Login' AND resource_id = ANY($1))::int AS n`,
      [oldIds],
    );
    expect(left.rows[0].n).toBe(0);
  });

  it('refuses other types and a missing or invalid date', async () => {
    const patient = await call('POST', '/admin/super/purge', { resourceType: 'Patient', before: '2000-01-01' });
    expect(patient.statusCode).toBe(400);
    expect(patient.json().issue[0].details.text).toBe('Only AuditEvent and Login can be purged');
    for (const before of [undefined, 'yesterday']) {
      const res = await call('POST', '/admin/super/purge', { resourceType: 'Login', before });
      expect(res.statusCode).toBe(400);
      expect(res.json().issue[0].expression).toEqual(['before']);
    }
  });
});
