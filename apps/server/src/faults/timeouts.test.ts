// Bounds on waiting, against the built server process: a pool exhausted by slow queries answers
// 503 with Retry-After once the acquire timeout has passed instead of hanging, and clients that
// stall (headers never finished, a body trickling in, a silent socket) are cut off by the
// connection timeouts while the server goes on answering everyone else.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import {
  buildServerBundle,
  signInOverHttp,
  startServerProcess,
  type ServerBundle,
  type ServerProcess,
} from '../test/process.js';

const ADMIN = { email: 'timeouts-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const FHIR_JSON = 'application/fhir+json';
const POOL_SIZE = 4;
const ACQUIRE_TIMEOUT_MS = 1000;
const HEADERS_TIMEOUT_MS = 2000;
const REQUEST_TIMEOUT_MS = 4000;
const IDLE_TIMEOUT_MS = 3000;
/** Slack for a loaded machine: Node checks its timeouts every half second here, the test polls. */
const SLACK_MS = 4000;

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;
let db: TestDatabase;
let server: ServerProcess;
let headers: Record<string, string>;

beforeAll(async () => {
  bundle = await buildServerBundle('timeouts');
  db = await createTestDatabase();
  cleanups.push(() => db.drop());
  server = await startServerProcess(
    bundle.main,
    {
      DATABASE_URL: db.url,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_DB_POOL_SIZE: String(POOL_SIZE),
      HEARTH_DB_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
      HEARTH_DB_STATEMENT_TIMEOUT_MS: '60000',
      HEARTH_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HEARTH_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HEARTH_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
    },
    cleanups,
  );
  headers = { authorization: `Bearer ${await signInOverHttp(server.baseUrl, ADMIN)}` };
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

async function timed(path: string): Promise<{ status: number; ms: number; retryAfter: string | null; body: string }> {
  const started = Date.now();
  const res = await fetch(`${server.baseUrl}${path}`, { headers, signal: AbortSignal.timeout(60_000) });
  const body = await res.text();
  return { status: res.status, ms: Date.now() - started, retryAfter: res.headers.get('retry-after'), body };
}

describe('a pool exhausted by slow queries', () => {
  it('answers 503 with Retry-After after the acquire timeout, and serves again once the queries end', async () => {
    const created = await fetch(`${server.baseUrl}fhir/R4/Patient`, {
      method: 'POST',
      headers: { ...headers, 'content-type': FHIR_JSON },
      body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Pool' }] }),
    });
    expect(created.status).toBe(201);
    const patient = (await created.json()) as Resource;

    // Every statement on a resource table now waits for this lock: the server's reads become slow
    // queries, each holding one of its pool's connections.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    cleanups.push(() => locker.end());
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE resource IN ACCESS EXCLUSIVE MODE');
    const reads = Array.from({ length: POOL_SIZE * 3 }, () => timed(`fhir/R4/Patient/${patient.id}`));
    let answered: Awaited<ReturnType<typeof timed>>[];
    try {
      // Those that found no connection answer while the others still wait on the lock.
      const refused = await Promise.race(
        reads.map((r) => r.then((res) => (res.status === 503 ? res : new Promise<never>(() => undefined)))),
      );
      expect(refused.ms).toBeGreaterThanOrEqual(ACQUIRE_TIMEOUT_MS - 50);
      expect(refused.ms).toBeLessThan(ACQUIRE_TIMEOUT_MS + SLACK_MS);
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect(JSON.parse(refused.body)).toMatchObject({
        resourceType: 'OperationOutcome',
        issue: [{ code: 'transient' }],
      });
      const health = await timed('healthcheck');
      expect(health.status).toBe(503);
      expect(health.ms).toBeLessThan(ACQUIRE_TIMEOUT_MS + SLACK_MS);
    } finally {
      await locker.query('COMMIT');
    }
    answered = await Promise.all(reads);
    // Each read either waited for the lock and succeeded, or was refused after the acquire timeout.
    expect(answered.map((r) => r.status).filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(answered.filter((r) => r.status === 503).length).toBeGreaterThan(0);
    expect(answered.filter((r) => r.status === 503).every((r) => r.retryAfter)).toBe(true);
    // No connection leaked: the server serves as before.
    answered = await Promise.all(Array.from({ length: POOL_SIZE * 2 }, () => timed(`fhir/R4/Patient/${patient.id}`)));
    expect(answered.map((r) => r.status)).toEqual(Array(POOL_SIZE * 2).fill(200));
  }, 120_000);
});

interface StalledClient {
  socket: Socket;
  /** Milliseconds from connecting to the server closing the connection. */
  closed: Promise<number>;
  received: () => string;
  stop: () => void;
}

/** A raw connection that sends `first`, then `trickle` every 500 ms (nothing when empty), until the server closes it. */
function stalledClient(first: string, trickle: string): StalledClient {
  const url = new URL(server.baseUrl);
  const socket = connect(Number(url.port), url.hostname);
  const started = Date.now();
  let received = '';
  let timer: NodeJS.Timeout | undefined;
  socket.on('data', (d: Buffer) => (received += d.toString()));
  socket.on('error', () => undefined);
  socket.on('connect', () => {
    socket.write(first);
    if (trickle) {
      timer = setInterval(() => socket.write(trickle), 500);
    }
  });
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    }),
  );
  return { socket, closed, received: () => received, stop: () => socket.destroy() };
}

describe('clients that stall', () => {
  it('are cut off by the headers and request timeouts and do not keep the server from others', async () => {
    const host = new URL(server.baseUrl).host;
    const kinds = {
      // Headers that never end (a header line every 500 ms keeps the socket from being idle).
      headers: () => stalledClient(`GET /healthcheck HTTP/1.1\r\nHost: ${host}\r\n`, 'X-Slow: 1\r\n'),
      // A body announced as 1 MB that trickles in a byte every 500 ms.
      body: () =>
        stalledClient(
          `POST /fhir/R4/Patient HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${headers.authorization}\r\nContent-Type: ${FHIR_JSON}\r\nContent-Length: 1000000\r\n\r\n{`,
          ' ',
        ),
      // A connection that says nothing at all.
      silent: () => stalledClient('', ''),
    };
    const clients = Object.entries(kinds).flatMap(([kind, make]) =>
      Array.from({ length: 100 }, () => ({ kind, client: make() })),
    );
    cleanups.push(() => clients.forEach(({ client }) => client.stop()));

    // Meanwhile the server answers others at once.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (let i = 0; i < 5; i++) {
      const [health, read] = await Promise.all([timed('healthcheck'), timed('fhir/R4/Patient?_count=1')]);
      expect([health.status, read.status]).toEqual([200, 200]);
      expect(Math.max(health.ms, read.ms)).toBeLessThan(2000);
    }

    const bounds: Record<string, number> = {
      headers: HEADERS_TIMEOUT_MS,
      body: REQUEST_TIMEOUT_MS,
      silent: Math.min(HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS),
    };
    for (const { kind, client } of clients) {
      const ms = await client.closed;
      expect(ms, `a stalled ${kind} client was cut off after ${ms} ms`).toBeLessThan(bounds[kind] + SLACK_MS);
      if (kind !== 'silent') {
        // Node answers a request it timed out with 408 before closing.
        expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
      }
    }
    const slowest = Object.fromEntries(
      await Promise.all(
        Object.keys(kinds).map(async (kind) => [
          kind,
          Math.max(...(await Promise.all(clients.filter((c) => c.kind === kind).map((c) => c.client.closed)))),
        ]),
      ),
    );
    console.log(`stalled clients cut off after at most (ms): ${JSON.stringify(slowest)}`);
    expect((await timed('healthcheck')).status).toBe(200);
  }, 120_000);
});
