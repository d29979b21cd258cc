/**
 * Backups (docs/self-hosting/backups.md): a database written through a running Hearth is dumped by
 * the guide's own `hearth-backup` script (pg_dump -Fc, while Hearth runs), restored with the guide's
 * `createdb --owner` and `pg_restore --no-owner --role` into a new database owned by a role of its
 * own, and Hearth started on it as that role reads back the resources, a Binary's bytes, and
 * search results from the restored search index. Skipped when this machine has no pg_dump of the
 * test server's major version or newer (the embedded PostgreSQL 17 has none on Debian 12).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../apps/server/src/test/db.js';
import {
  buildServerBundle,
  signInOverHttp,
  startServerProcess,
  type ServerBundle,
  type ServerProcess,
} from '../../apps/server/src/test/process.js';
import { ROOT } from './release.mjs';

const GUIDE = join(ROOT, 'docs', 'self-hosting', 'backups.md');
const ADMIN = { email: 'backup-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };

/** A PostgreSQL client program: on PATH, else the newest under /usr/lib/postgresql/<major>/bin. */
function findTool(name: string): string | undefined {
  const onPath = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const majors = readdirSync(base)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  return majors.map((v) => join(base, v, 'bin', name)).find((path) => existsSync(path));
}

function majorOf(tool: string): number {
  const out = execFileSync(tool, ['--version'], { encoding: 'utf8' }); // "pg_dump (PostgreSQL) 15.14 (Debian ...)"
  return Number(/\(PostgreSQL\)\s+(\d+)/.exec(out)?.[1] ?? 0);
}

/** The guide's hearth-backup script: the fenced block that starts with #!/bin/sh and names it. */
function backupScript(markdown: string): string {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  const script = blocks.find((b) => b.startsWith('#!/bin/sh\n') && b.includes('/usr/local/bin/hearth-backup'));
  if (!script) throw new Error(`${GUIDE} has no hearth-backup script`);
  return script;
}

/** The arguments the guide gives a command (the first line that runs it), for comparison with the test's. */
function guideFlags(markdown: string, command: string): string[] {
  const line = markdown
    .split('\n')
    .find((l) => new RegExp(`(^|\\s)${command}\\s`).test(l) && !l.trim().startsWith('#'));
  if (!line) throw new Error(`${GUIDE} never runs ${command}`);
  return line
    .slice(line.indexOf(command) + command.length)
    .trim()
    .split(/\s+/)
    .filter((arg) => arg.startsWith('--'))
    .map((arg) => arg.replace(/=.*$/, ''));
}

/** How the test runs createdb and pg_restore; the guide must run them with the same flags (bar the connection). */
const createdbArgs = (role: string, adminUrl: string, name: string) => [
  `--owner=${role}`,
  `--maintenance-db=${adminUrl}`,
  name,
];
const restoreArgs = (role: string, url: string, file: string) => [
  '--no-owner',
  `--role=${role}`,
  `--dbname=${url}`,
  file,
];
const flagNames = (args: string[], connection: string[] = []) =>
  args
    .filter((a) => a.startsWith('--'))
    .map((a) => a.replace(/=.*$/, ''))
    .filter((a) => !connection.includes(a));

const tools = { pg_dump: findTool('pg_dump'), pg_restore: findTool('pg_restore'), createdb: findTool('createdb') };
const cleanups: (() => Promise<void> | void)[] = [];
let usable = '';
let bundle: ServerBundle;
let db: TestDatabase;
let work: string;

function withUrl(url: string, change: (u: URL) => void): string {
  const u = new URL(url);
  change(u);
  return u.toString();
}

beforeAll(async () => {
  const missing = Object.entries(tools).filter(([, path]) => !path);
  if (missing.length > 0) {
    usable = `${missing.map(([name]) => name).join(', ')} not found`;
    return;
  }
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  const serverMajor = Math.floor(
    Number((await admin.query('SHOW server_version_num')).rows[0].server_version_num) / 10000,
  );
  await admin.end();
  const dumpMajor = majorOf(tools.pg_dump as string);
  if (dumpMajor < serverMajor) {
    usable = `pg_dump ${dumpMajor} cannot dump PostgreSQL ${serverMajor}`;
    return;
  }
  usable = 'yes';
  bundle = await buildServerBundle('backup');
  cleanups.push(() => bundle.remove());
  db = await createTestDatabase();
  cleanups.push(() => db.drop());
  work = mkdtempSync(join(tmpdir(), 'hearth-backup-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function client(server: ServerProcess) {
  const token = await signInOverHttp(server.baseUrl, ADMIN);
  const headers = { authorization: `Bearer ${token}` };
  return {
    post: async (path: string, body: string, contentType = 'application/fhir+json') => {
      const r = await fetch(`${server.baseUrl}fhir/R4/${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': contentType },
        body,
      });
      expect(r.status, await r.clone().text()).toBe(201);
      return (await r.json()) as { id: string };
    },
    get: (path: string, accept = 'application/fhir+json') =>
      fetch(`${server.baseUrl}fhir/R4/${path}`, { headers: { ...headers, accept } }),
    ids: async (query: string) => {
      const bundle = (await (await fetch(`${server.baseUrl}fhir/R4/${query}`, { headers })).json()) as {
        entry?: { resource: { id: string } }[];
      };
      return (bundle.entry ?? []).map((e) => e.resource.id).sort();
    },
  };
}

describe('backups', () => {
  it('the guide runs the commands this test runs', () => {
    const guide = readFileSync(GUIDE, 'utf8');
    const script = backupScript(guide);
    expect(script).toMatch(/^pg_dump -Fc --file=".+" --dbname="\$database"$/m);
    expect(guideFlags(guide, 'createdb')).toEqual(flagNames(createdbArgs('r', 'u', 'n'), ['--maintenance-db']));
    expect(guideFlags(guide, 'pg_restore')).toEqual(flagNames(restoreArgs('r', 'u', 'f')));
  });

  it('a dump taken while Hearth runs, restored into a new database, serves the same data', async (context) => {
    if (usable !== 'yes') {
      console.warn(`backup test skipped: ${usable}`);
      context.skip();
    }
    const env = { HEARTH_ADMIN_EMAIL: ADMIN.email, HEARTH_ADMIN_PASSWORD: ADMIN.password };
    const source = await startServerProcess(bundle.main, { ...env, DATABASE_URL: db.url }, cleanups);
    const api = await client(source);
    const family = `Backup${randomBytes(3).toString('hex')}`;
    const patients = [];
    for (const given of ['Ada', 'Alan', 'Grace']) {
      patients.push(
        (await api.post('Patient', JSON.stringify({ resourceType: 'Patient', name: [{ family, given: [given] }] }))).id,
      );
    }
    const observation = await api.post(
      'Observation',
      JSON.stringify({
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' }] },
        subject: { reference: `Patient/${patients[0]}` },
        valueQuantity: { value: 72, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' },
      }),
    );
    const bytes = randomBytes(3000);
    const binary = await api.post('Binary', bytes as unknown as string, 'application/octet-stream');
    const search = {
      family: `Patient?family=${family}`,
      given: `Patient?given=grace&family=${family}`,
      observations: `Observation?subject=Patient/${patients[0]}&code=http://loinc.org|8867-4&value-quantity=gt70`,
    };
    const before = { family: await api.ids(search.family), observations: await api.ids(search.observations) };
    expect(before.family).toEqual([...patients].sort());
    expect(before.observations).toEqual([observation.id]);

    // The guide's script, as cron or the timer runs it, while Hearth serves.
    const script = join(work, 'hearth-backup');
    writeFileSync(script, backupScript(readFileSync(GUIDE, 'utf8')), { mode: 0o755 });
    chmodSync(script, 0o755);
    const backups = join(work, 'backups');
    const path = `${dirname(tools.pg_dump as string)}:${process.env.PATH ?? '/usr/bin:/bin'}`;
    execFileSync(script, [], { env: { PATH: path, HEARTH_BACKUP_DIR: backups, HEARTH_BACKUP_DATABASE: db.url } });
    const dumps = readdirSync(backups);
    expect(dumps).toHaveLength(1);
    expect(dumps[0]).toMatch(/^hearth-\d{8}-\d{6}\.dump$/);
    source.proc.kill('SIGTERM');
    expect((await source.exited).code).toBe(0);

    // A role of its own owns the restored database, as `hearth` does in the guide.
    const adminUrl = inject('pgAdminUrl');
    const role = `hearth_restore_${randomBytes(4).toString('hex')}`;
    const rolePassword = randomBytes(12).toString('hex');
    const restoredName = `${new URL(db.url).pathname.slice(1)}_r`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${rolePassword}'`);
    cleanups.push(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${restoredName} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    });
    execFileSync(tools.createdb as string, createdbArgs(role, adminUrl, restoredName));
    const restoreInto = withUrl(adminUrl, (u) => (u.pathname = `/${restoredName}`));
    execFileSync(tools.pg_restore as string, restoreArgs(role, restoreInto, join(backups, dumps[0])));

    const restoredUrl = withUrl(adminUrl, (u) => {
      u.pathname = `/${restoredName}`;
      u.username = role;
      u.password = rolePassword;
    });
    const asRole = new pg.Client({ connectionString: restoredUrl });
    await asRole.connect();
    const tableOwners = await asRole.query<{ owner: string }>(
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
    );
    await asRole.end();
    expect(tableOwners.rows.map((r) => r.owner)).toEqual([role]);

    const restored = await startServerProcess(bundle.main, { ...env, DATABASE_URL: restoredUrl }, cleanups);
    const after = await client(restored);
    const read = (await (await after.get(`Patient/${patients[2]}`)).json()) as { name: { given: string[] }[] };
    expect(read.name[0].given).toEqual(['Grace']);
    expect(await after.ids(search.family)).toEqual(before.family);
    expect(await after.ids(search.given)).toEqual([patients[2]]);
    expect(await after.ids(search.observations)).toEqual(before.observations);
    const content = Buffer.from(
      await (await after.get(`Binary/${binary.id}`, 'application/octet-stream')).arrayBuffer(),
    );
    expect(content.equals(bytes)).toBe(true);
  }, 600_000);
});
