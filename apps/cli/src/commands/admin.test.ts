/**
 * hearth admin ...: every command against a real server, as its super admin, and refused (exit 1,
 * the server's 403) to a project admin. The reindex really rebuilds index rows deleted behind the
 * server's back, shows its progress, and prints what it did.
 */
import { badRequest, fail } from '@hearth/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../server/src/test/app.js';
import { createTestProject, signIn } from '../../../server/src/test/auth.js';
import { migrations } from '../../../server/src/storage/migrations/index.js';
import { defineServerReindex, SERVER_REINDEX } from '../../../server/src/jobs/reindex.js';
import { ensureCliBuilt, runCli, startCli, tempHome, waitForStderr } from '../test/cli.test-util.js';

let t: TestApp;
let home: ReturnType<typeof tempHome>;
let superToken: string;

beforeAll(async () => {
  await ensureCliBuilt();
  t = await createTestApp({ listen: true });
  home = tempHome();
  superToken = (await signIn(t.app, t.superAdmin.email, t.superAdmin.password)).access_token;
}, 120_000);
afterAll(async () => {
  await t?.close();
  home?.remove();
});

const asSuperAdmin = (args: string[], input?: string) =>
  runCli(['admin', ...args], {
    home: home.home,
    env: { HEARTH_BASE_URL: t.baseUrl, HEARTH_ACCESS_TOKEN: superToken },
    input,
  });

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

async function found(family: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: `/fhir/R4/Patient?family=${family}`, headers: t.authHeaders });
  return res.json().entry?.length ?? 0;
}

describe('hearth admin reindex', () => {
  it('rebuilds the index rows of a type, drawing done/total, and prints the counts', async () => {
    const ids = [await createPatient('Clireindex'), await createPatient('Clireindex')];
    await t.pool.query(`DELETE FROM search_string WHERE resource_type = 'Patient' AND resource_id = ANY($1)`, [ids]);
    expect(await found('Clireindex')).toBe(0);
    const patients = (await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Patient" WHERE NOT deleted`))
      .rows[0].n;
    const result = await asSuperAdmin([
      'reindex',
      '--type',
      'Patient',
      '--progress',
      'lines',
      '--poll-interval',
      '0.1',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Reindex started; status: http:\/\/127\.0\.0\.1:\d+\/fhir\/R4\/job\/[^/]+\/status/);
    expect(result.stderr).toContain(`reindex: ${patients}/${patients} resources (100%)`);
    expect(result.stderr).toContain(`Reindexed ${patients} resources of 1 type`);
    expect(result.stdout).toMatch(new RegExp(`^Patient\\s+${patients}$`, 'm'));
    expect(await found('Clireindex')).toBe(2);
  });

  it('draws the progress bar when asked, and prints JSON with --json', async () => {
    const result = await asSuperAdmin(['reindex', '--type', 'Patient,Practitioner', '--progress', 'bar', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const counts = JSON.parse(result.stdout) as { total: number; types: { resourceType: string; count: number }[] };
    expect(counts.types.map((c) => c.resourceType)).toEqual(['Patient', 'Practitioner']);
    expect(counts.total).toBe(counts.types[0].count + counts.types[1].count);
    expect(result.stderr).toMatch(new RegExp(`reindex .*100% \\| ${counts.total}/${counts.total} resources`));
  });

  it("fails with the server's reason for an unknown type", async () => {
    const result = await asSuperAdmin(['reindex', '--type', 'Patient,Nope']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('HTTP 400: Not a stored resource type: Nope');
  });
});

describe('hearth admin reindex while the job runs', () => {
  it('draws the progress the job records, and Ctrl-C cancels the job (exit 130)', async () => {
    const { asyncJobs } = t.services.automation;
    let release: () => void = () => undefined;
    // A reindex that records its progress, then waits for the test.
    asyncJobs.define(SERVER_REINDEX, async (_params, job) => {
      await job.progress(0.3, '3/10 resources (Patient)', { done: 3, total: 10 });
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return undefined;
    });
    try {
      const child = startCli(['admin', 'reindex', '--progress', 'lines', '--poll-interval', '0.1'], {
        home: home.home,
        env: { HEARTH_BASE_URL: t.baseUrl, HEARTH_ACCESS_TOKEN: superToken },
      });
      const [, jobId] = await waitForStderr(child, /job\/([^/]+)\/status/);
      await waitForStderr(child, /^reindex: 3\/10 resources \(30%\) \(Patient\)$/m);
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(child.output.stderr).toContain('Cancelling the reindex...');
      const { rows } = await t.pool.query<{ content: string }>(`SELECT content FROM "AsyncJob" WHERE id = $1`, [jobId]);
      expect(JSON.parse(rows[0].content).status).toBe('cancelled');
    } finally {
      release();
      defineServerReindex(asyncJobs, { pool: t.pool, indexer: t.services.reindexer });
    }
  });
});

describe('hearth admin reindex when the job fails', () => {
  it("exits 1 with the job's reason", async () => {
    const { asyncJobs } = t.services.automation;
    asyncJobs.define(SERVER_REINDEX, async () => fail(badRequest('The index tables are being rebuilt by hand')));
    try {
      const result = await asSuperAdmin([
        'reindex',
        '--type',
        'Patient',
        '--progress',
        'none',
        '--poll-interval',
        '0.1',
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'Error: The reindex failed: HTTP 400: The index tables are being rebuilt by hand',
      );
      expect(result.stdout).toBe('');
    } finally {
      defineServerReindex(asyncJobs, { pool: t.pool, indexer: t.services.reindexer });
    }
  });
});

describe('hearth admin stats, projects, migrate-status, migrate', () => {
  it('shows the database figures and resources per type', async () => {
    const result = await asSuperAdmin(['stats']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Database size: +\d+(\.\d)? (kB|MB|GB)$/m);
    expect(result.stdout).toMatch(/^Project +\d+$/m);
    expect(result.stdout).toContain(`Migrations:    ${migrations.length} applied`);
    const json = JSON.parse((await asSuperAdmin(['stats', '--json'])).stdout);
    expect(json.resources.Project).toBeGreaterThan(0);
  });

  it('lists every project', async () => {
    const other = await createTestProject(t.app, t.services, 'Listed by the CLI');
    const result = await asSuperAdmin(['projects']);
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse((await asSuperAdmin(['projects', '--json'])).stdout) as {
      id: string;
      memberCount: number;
    }[];
    const listed = json.find((p) => p.id === other.projectId);
    // Its owner and the membership of its default client.
    expect(listed?.memberCount).toBe(2);
    expect(result.stdout).toMatch(
      new RegExp(`^${other.projectId}\\s+Listed by the CLI\\s+User/${other.user.id}\\s+2\\s+\\d`, 'm'),
    );
    expect(result.stdout).toMatch(/^\S+\s+Super Admin \(super admin\)/m);
  });

  it('lists the applied migrations and what is pending', async () => {
    const result = await asSuperAdmin(['migrate-status']);
    expect(result.code, result.stderr).toBe(0);
    for (const m of migrations) {
      expect(result.stdout).toMatch(new RegExp(`^${m.id}\\s+${m.name.replace(/[()[\]+.*?]/g, '\\$&')}\\s+\\d`, 'm'));
    }
    expect(result.stderr).toContain(`${migrations.length} applied, 0 pending`);
    const last = [...migrations].sort((a, b) => b.id - a.id)[0];
    await t.pool.query('DELETE FROM hearth_migration WHERE id = $1', [last.id]);
    const pending = await asSuperAdmin(['migrate-status', '--json']);
    expect(JSON.parse(pending.stdout).pending).toEqual([{ id: last.id, name: last.name }]);
    // The migration itself is not undone: applying it again must be harmless, as each one is.
    await t.pool.query('INSERT INTO hearth_migration (id, name) VALUES ($1, $2)', [last.id, last.name]);
    const migrate = await asSuperAdmin(['migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout.trim()).toBe('Applied 0 migrations');
  });
});

describe('hearth admin purge', () => {
  it('asks for --yes when not on a terminal, checks the date, then purges', async () => {
    const unconfirmed = await asSuperAdmin(['purge', 'Login', '--before', '2000-01-01']);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain('confirm with --yes');
    const badDate = await asSuperAdmin(['purge', 'Login', '--before', 'last week', '--yes']);
    expect(badDate.code).toBe(1);
    expect(badDate.stderr).toContain('--before must be a date (2025-01-31) or an instant');
    const other = await asSuperAdmin(['purge', 'Patient', '--before', '2000-01-01', '--yes']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('HTTP 400: Only AuditEvent and Login can be purged');
    // A throwaway user's sign-in, made old (the others hold the sessions the tests use).
    const throwaway = await createTestProject(t.app, t.services, 'Purged sign-in');
    await t.pool.query(
      `UPDATE "Login" SET last_updated = '2001-06-01' WHERE content::jsonb -> 'user' ->> 'reference' = $1`,
      [`User/${throwaway.user.id}`],
    );
    const purged = await asSuperAdmin(['purge', 'Login', '--before', '2002-01-01', '--yes']);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout.trim()).toBe('Purged 1 Login');
  });
});

describe('hearth admin set-password', () => {
  it('reads the password from stdin, never echoes it, and the user signs in with it', async () => {
    const user = await createTestProject(t.app, t.services, 'Password reset');
    const password = 'a-new-password-from-stdin';
    const result = await asSuperAdmin(['set-password', user.email], `${password}\n`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(`Password set for ${user.email}`);
    expect(result.stdout + result.stderr).not.toContain(password);
    expect((await signIn(t.app, user.email, password)).access_token).toBeTruthy();
  });

  it('fails with the reason for a weak password, an unknown user or no password', async () => {
    const weak = await asSuperAdmin(['set-password', t.testProject.email], 'short\n');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('HTTP 400: Password must be at least 8 characters');
    const unknown = await asSuperAdmin(['set-password', 'nobody@example.com'], 'long enough password\n');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('HTTP 404: User not found');
    const none = await asSuperAdmin(['set-password', t.testProject.email], '');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('No password on stdin');
  });

  it('takes no password on the command line', async () => {
    const result = await asSuperAdmin(['set-password', t.testProject.email, '--password', 'in the history']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("unknown option '--password'");
  });
});

describe('refusal', () => {
  it("refuses every command to a project admin with the server's 403 (exit 1)", async () => {
    const commands = [
      ['stats'],
      ['projects'],
      ['reindex', '--type', 'Patient'],
      ['purge', 'Login', '--before', '2000-01-01', '--yes'],
      ['migrate-status'],
      ['migrate'],
      ['set-password', t.testProject.email],
    ];
    for (const args of commands) {
      const result = await runCli(['admin', ...args], {
        home: home.home,
        env: { HEARTH_BASE_URL: t.baseUrl, HEARTH_ACCESS_TOKEN: t.token },
        input: 'a long enough password\n',
      });
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toContain('HTTP 403: Only super admins may do this');
    }
    // The project admin's password is unchanged.
    expect((await signIn(t.app, t.testProject.email, t.testProject.password)).access_token).toBeTruthy();
  });

  it('says when there is no session', async () => {
    const result = await runCli(['admin', 'stats'], { home: home.home, env: { HEARTH_BASE_URL: t.baseUrl } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Not signed in');
  });
});
