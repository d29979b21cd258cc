// The built server as a process (node apps/server/dist/main.js): a kill -9 in the middle of a large
// transaction leaves the database as if it never started; SIGTERM drains in-flight requests.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getFreePort } from './test/app.js';
import { createTestDatabase, type TestDatabase } from './test/db.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const BUILD_DIR = `apps/server/dist/test-${randomBytes(4).toString('hex')}`;
const MAIN = join(ROOT, BUILD_DIR, 'main.js');
const ADMIN = { email: 'process-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };

interface ServerProcess {
  proc: ChildProcess;
  baseUrl: string;
  headers: Record<string, string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  // The server bundle exactly as `npm run build` makes it, written to a directory of this run.
  execFileSync('node', ['tools/build.mjs', '--server-only', `--server-out=${BUILD_DIR}/main.js`], {
    cwd: ROOT,
    stdio: 'pipe',
  });
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  rmSync(join(ROOT, BUILD_DIR), { recursive: true, force: true });
});

async function startServer(db: TestDatabase): Promise<ServerProcess> {
  const port = await getFreePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-proc-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const baseUrl = `http://127.0.0.1:${port}/`;
  const proc = spawn('node', [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: db.url,
      PORT: String(port),
      HEARTH_HOST: '127.0.0.1',
      HEARTH_BASE_URL: baseUrl,
      HEARTH_DATA_DIR: dataDir,
      HEARTH_LOG_LEVEL: 'warn',
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_SHUTDOWN_TIMEOUT_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    proc.on('exit', (code, signal) => res({ code, signal })),
  );
  cleanups.push(() => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
    }
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`server exited at start: ${out}`);
    }
    const ok = await fetch(`${baseUrl}healthcheck`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) {
      break;
    }
    if (Date.now() > deadline) {
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { proc, baseUrl, headers: await signIn(baseUrl), exited, output: () => out };
}

/** A bearer token for the super admin through the sign-in flow, when the server asks for one. */
async function signIn(baseUrl: string): Promise<Record<string, string>> {
  const open = await fetch(`${baseUrl}fhir/R4/Patient?_count=1`);
  if (open.status !== 401) {
    return {};
  }
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const post = (path: string, body: unknown) =>
    fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
  let login = await post('auth/login', { ...ADMIN, codeChallenge: challenge, codeChallengeMethod: 'S256' });
  if (!login.code) {
    const memberships = login.memberships as { id: string }[] | undefined;
    login = await post('auth/profile', { login: login.login, profile: memberships?.[0]?.id });
  }
  const token = await fetch(`${baseUrl}oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: String(login.code),
      code_verifier: verifier,
    }).toString(),
  }).then((r) => r.json() as Promise<{ access_token?: string }>);
  if (!token.access_token) {
    throw new Error(`sign-in failed: ${JSON.stringify(login)} ${JSON.stringify(token)}`);
  }
  return { authorization: `Bearer ${token.access_token}` };
}

/** A transaction of `n` updates-as-create (one statement round each), slow enough to catch in flight. */
function largeTransaction(prefix: string, n: number): string {
  const entry = Array.from({ length: n }, (_, i) => ({
    resource: { resourceType: 'Patient', id: `${prefix}-${i}`, name: [{ family: `Row${i}` }] },
    request: { method: 'PUT', url: `Patient/${prefix}-${i}` },
  }));
  return JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry });
}

async function database(db: TestDatabase): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  cleanups.push(() => client.end());
  return client;
}

/** Waits until the server holds a transaction open for a while: its writes have begun, the commit has not. */
async function waitForOpenTransaction(client: pg.Client, minAgeMs: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'hearth'
         AND xact_start IS NOT NULL AND now() - xact_start > make_interval(secs => $1::float / 1000)`,
      [minAgeMs],
    );
    if (rows[0].n > 0) {
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no transaction was seen in flight');
}

async function countRows(client: pg.Client, prefix: string): Promise<{ current: number; history: number }> {
  const current = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM resource WHERE id LIKE $1', [
    `${prefix}-%`,
  ]);
  const history = await client.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM resource_history WHERE id LIKE $1',
    [`${prefix}-%`],
  );
  return { current: current.rows[0].n, history: history.rows[0].n };
}

describe('the server process', () => {
  it('killed in the middle of a large transaction, leaves the database as if it never started', async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const server = await startServer(db);
    const client = await database(db);
    const prefix = `kill-${randomBytes(3).toString('hex')}`;
    const pending = fetch(`${server.baseUrl}fhir/R4`, {
      method: 'POST',
      headers: { ...server.headers, 'content-type': 'application/fhir+json' },
      body: largeTransaction(prefix, 3000),
    }).catch((err: unknown) => err);
    await waitForOpenTransaction(client, 500);
    server.proc.kill('SIGKILL');
    const { signal } = await server.exited;
    expect(signal).toBe('SIGKILL');
    expect(await pending).toBeInstanceOf(Error); // the client never got an answer

    // PostgreSQL rolls back the dead connection's transaction; nothing of it was ever visible.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`,
      );
      if (rows[0].n === 0) {
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await countRows(client, prefix)).toEqual({ current: 0, history: 0 });

    // A new process on the same database starts and serves as if the transaction never happened.
    const again = await startServer(db);
    const read = await fetch(`${again.baseUrl}fhir/R4/Patient/${prefix}-0`, { headers: again.headers });
    expect(read.status).toBe(404);
    again.proc.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
  }, 240_000);

  it('on SIGTERM finishes the request in flight, refuses new work, and exits 0', async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const server = await startServer(db);
    const client = await database(db);
    const prefix = `drain-${randomBytes(3).toString('hex')}`;
    const pending = fetch(`${server.baseUrl}fhir/R4`, {
      method: 'POST',
      headers: { ...server.headers, 'content-type': 'application/fhir+json' },
      body: largeTransaction(prefix, 1500),
    });
    await waitForOpenTransaction(client, 200);
    server.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    const late = await fetch(`${server.baseUrl}fhir/R4/Patient?_count=1`, { headers: server.headers })
      .then((r) => r.status)
      .catch(() => 'refused');
    expect(late === 503 || late === 'refused', String(late)).toBe(true);

    const res = await pending;
    expect(res.status).toBe(200);
    const bundle = (await res.json()) as { type: string; entry: unknown[] };
    expect(bundle.type).toBe('transaction-response');
    expect(bundle.entry).toHaveLength(1500);
    const { code } = await server.exited;
    expect(code, server.output()).toBe(0);
    expect(await countRows(client, prefix)).toEqual({ current: 1500, history: 1500 });
  }, 240_000);
});
