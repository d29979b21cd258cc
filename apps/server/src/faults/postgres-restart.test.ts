// PostgreSQL restarted under load (stop, 10 s, start), with the built server process left running:
// while the database is down every request answers 503 with Retry-After (never 500, never hangs),
// /healthcheck says unhealthy; within 5 s of the database's return the server serves again by
// itself, and a job queued before the outage (a notification's retry) and subscriptions carry on.
// The test runs a PostgreSQL of its own: the machine's shared one must never be stopped.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import type { Resource } from '@hearth/core';
import {
  buildServerBundle,
  signInOverHttp,
  startOwnPostgres,
  startServerProcess,
  type ServerBundle,
  type ServerProcess,
} from '../test/process.js';
import type { EmbeddedDatabase } from '../platform/embedded-postgres.js';
import { seededRandom, WriteLoad, type LoadTarget } from '../test/write-load.js';
import { startReceiver, type Receiver } from '../subscriptions/testing.js';
import { waitFor } from '../bots/testing.js';

const ADMIN = { email: 'restart-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const FHIR_JSON = 'application/fhir+json';
/** The bound: serving again within 5 s of PostgreSQL's return. */
const BACK_WITHIN_MS = 5000;
/** No request may take longer than this, down or up (the pool's acquire timeout is 2 s here). */
const REQUEST_TIMEOUT_MS = 10_000;

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;
let postgres: EmbeddedDatabase;
let receiver: Receiver;
let server: ServerProcess;
let target: LoadTarget;

beforeAll(async () => {
  bundle = await buildServerBundle('pg-restart');
  postgres = await startOwnPostgres(cleanups);
  receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  server = await startServerProcess(
    bundle.main,
    {
      DATABASE_URL: postgres.connectionString,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_OUTBOUND_ALLOW_LIST: '127.0.0.1',
      HEARTH_DB_ACQUIRE_TIMEOUT_MS: '2000',
      HEARTH_JOB_POLLING_INTERVAL_MS: '500',
      HEARTH_JOB_RETRY_DELAY_SECONDS: '1',
      // 16 clients write faster than the production per-user limit; the limiter still runs.
      HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000',
      HEARTH_RATE_LIMIT_IP_REQUESTS_PER_MINUTE: '1000000',
    },
    cleanups,
  );
  target = {
    baseUrl: server.baseUrl,
    headers: { authorization: `Bearer ${await signInOverHttp(server.baseUrl, ADMIN)}` },
  };
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

async function create(resource: Resource): Promise<Resource> {
  const res = await fetch(`${target.baseUrl}fhir/R4/${resource.resourceType}`, {
    method: 'POST',
    headers: { ...target.headers, 'content-type': FHIR_JSON },
    body: JSON.stringify(resource),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Resource;
}

async function health(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${target.baseUrl}healthcheck`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A websocket bound to a new websocket Subscription; `messages` collects what arrives. */
async function boundWebsocket(criteria: string): Promise<{ socket: WebSocket; messages: string[] }> {
  const sub = await create({
    resourceType: 'Subscription',
    status: 'active',
    reason: 'postgres restart (websocket)',
    criteria,
    channel: { type: 'websocket' },
  } as Resource);
  const binding = await fetch(`${target.baseUrl}fhir/R4/Subscription/${sub.id}/$get-ws-binding-token`, {
    headers: target.headers,
  });
  const params = (await binding.json()) as { parameter: { name: string; valueString?: string }[] };
  const token = params.parameter.find((p) => p.name === 'token')?.valueString;
  const socket = new WebSocket(`${target.baseUrl.replace(/^http/, 'ws')}ws/subscriptions-r4`);
  cleanups.push(() => socket.terminate());
  const messages: string[] = [];
  socket.on('message', (data) => messages.push(String(data)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token } }));
  await waitFor(() => messages.find((m) => m.includes('"handshake"')), 30_000);
  return { socket, messages };
}

function notificationsFor(path: string, id: string) {
  return receiver.requests.filter((r) => r.url === path && r.body.includes(id));
}

describe('PostgreSQL restarted under load', () => {
  it('answers 503 with Retry-After while it is down and serves again within 5 s of its return, jobs and subscriptions included', async () => {
    onTestFailed(() => console.log(`server output:\n${server.output()}`));
    const family = `Restart${randomBytes(3).toString('hex')}`;
    await create({
      resourceType: 'Subscription',
      status: 'active',
      reason: 'postgres restart',
      criteria: `Patient?name=${family}`,
      channel: { type: 'rest-hook', endpoint: `${receiver.url}restart`, payload: FHIR_JSON },
    } as Resource);
    const socketFamily = `Socket${randomBytes(3).toString('hex')}`;
    const ws = await boundWebsocket(`Patient?name=${socketFamily}`);

    const seed = Number(process.env.HEARTH_FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`postgres restart test: seed ${seed} (HEARTH_FAULT_SEED=${seed} replays it)`);
    const load = new WriteLoad({
      clients: 16,
      transactionSize: 100,
      random: seededRandom(seed),
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    load.setTarget(target);
    load.start();
    let before: Resource;
    try {
      await load.acknowledgedMore(50);

      // A notification whose first attempt fails just before the outage: its retry is a queued job.
      receiver.failNext(1);
      before = await create({ resourceType: 'Patient', name: [{ family }] } as Resource);
      await waitFor(() => notificationsFor('/restart', before.id as string)[0], 30_000);

      await postgres.stop();
      const downAt = Date.now();
      // Down: health says so, every answer is a 503 with Retry-After (checked by the load too).
      const unhealthy = await health();
      expect(unhealthy.status).toBe(503);
      expect(unhealthy.body).toMatchObject({ ok: false, postgres: false });
      const read = await fetch(`${target.baseUrl}fhir/R4/Patient/${before.id}`, {
        headers: target.headers,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      expect(read.status, await read.clone().text()).toBe(503);
      expect(Number(read.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await read.json()) as Resource).resourceType).toBe('OperationOutcome');
      const whileDown = load.report();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10_000 - (Date.now() - downAt))));
      const downReport = load.report();
      expect(downReport.statuses['503'] ?? 0, JSON.stringify(downReport)).toBeGreaterThan(
        whileDown.statuses['503'] ?? 0,
      );

      await postgres.restart();
      const upAt = Date.now();
      // Back: a write and the health check succeed within 5 s, without restarting the server.
      await waitFor(async () => {
        const res = await fetch(`${target.baseUrl}fhir/R4/Patient`, {
          method: 'POST',
          headers: { ...target.headers, 'content-type': FHIR_JSON },
          body: JSON.stringify({ resourceType: 'Patient' }),
        });
        return res.status === 201 ? true : undefined;
      }, 30_000);
      const backAfterMs = Date.now() - upAt;
      console.log(`postgres restart test: serving again ${backAfterMs} ms after PostgreSQL started`);
      expect(backAfterMs).toBeLessThan(BACK_WITHIN_MS);
      expect((await health()).status).toBe(200);
      expect(server.proc.exitCode, server.output()).toBeNull();
      const acksBack = load.acknowledged;
      await load.acknowledgedMore(50);
      expect(load.acknowledged).toBeGreaterThan(acksBack);
    } finally {
      await load.stop();
    }
    const report = load.report();
    console.log(`postgres restart test: ${JSON.stringify(report)}`);
    expect(report.violations, server.output()).toEqual([]);
    expect(report.longestMs).toBeLessThan(REQUEST_TIMEOUT_MS);

    // The retry queued before the outage is delivered after it; a write after it notifies as before.
    await waitFor(() => notificationsFor('/restart', before.id as string)[1], 60_000);
    const after = await create({ resourceType: 'Patient', name: [{ family }] } as Resource);
    await waitFor(() => notificationsFor('/restart', after.id as string)[0], 60_000);

    // The websocket bound before the outage hears writes after it (its process listens again). A
    // notification published before the listening connection is back is missed, so write until one arrives.
    await waitFor(async () => {
      const written = await create({ resourceType: 'Patient', name: [{ family: socketFamily }] } as Resource);
      const heard = await waitFor(() => ws.messages.find((m) => m.includes(written.id as string)), 3000).catch(
        () => undefined,
      );
      return heard;
    }, 60_000);
    expect(ws.socket.readyState).toBe(WebSocket.OPEN);

    // Nothing acknowledged was lost, no transaction is partly visible.
    const verified = await load.verify(target);
    console.log(`postgres restart test: verified ${verified.patients} patients, ${verified.transactions} transactions`);
    expect(verified.problems).toEqual([]);
  }, 240_000);
});
