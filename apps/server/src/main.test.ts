// The built server as a process (node apps/server/dist/main.js): a kill -9 in the middle of a large
// transaction leaves the database as if it never started; SIGTERM drains in-flight requests.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './test/db.js';
import {
  buildServerBundle,
  signInOverHttp,
  startServerProcess,
  type ServerBundle,
  type ServerProcess,
} from './test/process.js';

const ADMIN = { email: 'process-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;

beforeAll(async () => {
  bundle = await buildServerBundle('process');
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

async function startServer(db: TestDatabase): Promise<ServerProcess & { headers: Record<string, string> }> {
  const server = await startServerProcess(
    (bundle as ServerBundle).main,
    {
      DATABASE_URL: db.url,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_SHUTDOWN_TIMEOUT_MS: '60000',
    },
    cleanups,
  );
  // A bearer token for the super admin, when the server asks for one.
  const open = await fetch(`${server.baseUrl}fhir/R4/Patient?_count=1`);
  const headers: Record<string, string> =
    open.status === 401 ? { authorization: `Bearer ${await signInOverHttp(server.baseUrl, ADMIN)}` } : {};
  return { ...server, headers };
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
