// Hearth scales out as N stateless processes on one PostgreSQL: three built servers
// (`node main.js`) start at the same moment on an empty database, and clients spread over them see
// one server. The three are started once; each check below runs against them, the kill last.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, Resource } from '@hearth/core';
import { createTestDatabase, type TestDatabase } from './test/db.js';
import {
  buildServerBundle,
  logLines,
  serverOfConnection,
  signInOverHttp,
  startServerProcess,
  type ServerBundle,
  type ServerProcess,
} from './test/process.js';
import { waitFor } from './bots/testing.js';
import { startReceiver, type Receiver } from './subscriptions/testing.js';
import { migrations } from './storage/migrations/index.js';
import { JOB_SCHEMA } from './storage/migrations/0300-job-queue.js';

const ADMIN = { email: 'scale-out@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const FHIR_JSON = 'application/fhir+json';
/** One public URL for all, as behind a load balancer: a token or binding issued by one is good at the others. */
const PUBLIC_URL = 'http://hearth.test/';
const AUTH_CACHE_MS = 2000;
/** A killed process's job runs elsewhere about a lease (+ half a lease of maintenance interval, + the retry delay) later. */
const LEASE_SECONDS = 10;
/** Process 1's subscription batch window: its after-commit broadcasts come this late. */
const LATE_BROADCAST_MS = 3000;

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;
let db: TestDatabase;
let sql: pg.Client;
let receiver: Receiver;
let servers: ServerProcess[];
let token: string;

beforeAll(async () => {
  bundle = await buildServerBundle('scale-out');
  db = await createTestDatabase({ empty: true });
  cleanups.push(() => db.drop());
  receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  // Each process has a data directory of its own and shares nothing but the database: Binary
  // content (bot code, uploads, export files) is kept in PostgreSQL by default.
  const dataDirs = [1, 2, 3].map(() => mkdtempSync(join(tmpdir(), 'hearth-scale-out-')));
  cleanups.push(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const env = {
    DATABASE_URL: db.url,
    HEARTH_BASE_URL: PUBLIC_URL,
    HEARTH_ADMIN_EMAIL: ADMIN.email,
    HEARTH_ADMIN_PASSWORD: ADMIN.password,
    // Info: each process says whether it applied the migrations.
    HEARTH_LOG_LEVEL: 'info',
    HEARTH_OUTBOUND_ALLOW_LIST: '127.0.0.1',
    HEARTH_OUTBOUND_TIMEOUT_MS: '60000',
    HEARTH_BOT_TIMEOUT_MS: '60000',
    HEARTH_JOB_POLLING_INTERVAL_MS: '500',
    HEARTH_JOB_RETRY_DELAY_SECONDS: '1',
    HEARTH_JOB_LEASE_SECONDS: String(LEASE_SECONDS),
    HEARTH_AUTH_CACHE_MS: String(AUTH_CACHE_MS),
  };
  // Started at the same moment, on a database without a single table. Process 1 holds the changes
  // it hears for a while before queuing them (and telling the others of subscription changes
  // after the fact): the others must know of a subscription written there without that.
  servers = await Promise.all(
    [1, 2, 3].map((n) =>
      startServerProcess(
        (bundle as ServerBundle).main,
        {
          ...env,
          HEARTH_DATA_DIR: dataDirs[n - 1],
          HEARTH_SUBSCRIPTION_BATCH_WINDOW_MS: n === 1 ? String(LATE_BROADCAST_MS) : '5',
        },
        cleanups,
      ),
    ),
  );
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  cleanups.push(() => sql.end());
  token = await signInOverHttp(servers[0].baseUrl, ADMIN);
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

/** A request to one process; `path` is relative to its root. */
async function call(
  server: ServerProcess,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${token}` },
): Promise<{ status: number; headers: Headers; json: () => Record<string, unknown> }> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': FHIR_JSON }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: () => JSON.parse(text) as Record<string, unknown> };
}

async function create(server: ServerProcess, resource: Resource): Promise<Resource & { id: string }> {
  const res = await call(server, 'POST', `fhir/R4/${resource.resourceType}`, resource);
  expect(res.status, JSON.stringify(res.json())).toBe(201);
  return res.json() as unknown as Resource & { id: string };
}

/** Waits until no subscription evaluation or delivery is queued or running on any process. */
async function subscriptionQueuesIdle(): Promise<void> {
  await waitFor(async () => {
    const { rows } = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${JOB_SCHEMA}.job
        WHERE name IN ('subscription-evaluate', 'subscription-deliver') AND state IN ('created', 'retry', 'active')`,
    );
    return rows[0].n === 0 ? true : undefined;
  }, 60_000);
}

/** A deployed bot of the super admin's project. */
async function deployBot(name: string, code: string): Promise<string> {
  const projectId = (await call(servers[0], 'GET', 'auth/me')).json() as { project?: { id?: string } };
  const created = await call(servers[0], 'POST', `admin/projects/${projectId.project?.id}/bot`, { name });
  expect(created.status, JSON.stringify(created.json())).toBe(201);
  const id = created.json().id as string;
  const deployed = await call(servers[1], 'POST', `fhir/R4/Bot/${id}/$deploy`, { code, filename: `${name}.js` });
  expect(deployed.status, JSON.stringify(deployed.json())).toBe(200);
  return id;
}

const family = (label: string) => `${label}${randomBytes(4).toString('hex')}`;

describe('three server processes on one database', () => {
  it('started together on an empty database, apply the migrations once and bootstrap once', async () => {
    const { rows } = await sql.query<{ id: number; n: number }>(
      'SELECT id, count(*)::int AS n FROM hearth_migration GROUP BY id ORDER BY id',
    );
    expect(rows).toEqual(migrations.map((m) => ({ id: m.id, n: 1 })).sort((a, b) => a.id - b.id));
    // Exactly one process applied them (all of them); the others found them applied.
    const applied = servers.map(
      (server) => logLines(server).find((line) => line.msg === 'database migrations done')?.applied,
    );
    expect(applied.sort()).toEqual([0, 0, migrations.length]);
    const applying = servers.flatMap((server) => logLines(server).filter((line) => line.msg === 'applying migration'));
    expect(applying.map((line) => line.migration).sort((a, b) => Number(a) - Number(b))).toEqual(
      migrations.map((m) => m.id).sort((a, b) => a - b),
    );
    // One terminology load, one super admin project, one super admin.
    const loaded = servers.filter((server) =>
      logLines(server).some((line) => line.msg === 'loaded the R4 terminology'),
    );
    expect(loaded).toHaveLength(1);
    const projects = await sql.query(
      `SELECT id FROM resource WHERE resource_type = 'Project' AND NOT deleted AND content::jsonb @> '{"superAdmin": true}'`,
    );
    expect(projects.rowCount).toBe(1);
    const users = await sql.query(
      `SELECT id FROM resource WHERE resource_type = 'User' AND NOT deleted AND content::jsonb ->> 'email' = $1`,
      [ADMIN.email],
    );
    expect(users.rowCount).toBe(1);
  });

  it('Binary content uploaded through one process is served by the others, every version of it', async () => {
    // Several chunks of content, so that it is streamed in and out in pieces.
    const first = randomBytes(2.5 * 1024 * 1024);
    const auth = { authorization: `Bearer ${token}` };
    const created = await fetch(`${servers[0].baseUrl}fhir/R4/Binary`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/pdf' },
      body: first,
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const second = randomBytes(1000);
    const updated = await fetch(`${servers[2].baseUrl}fhir/R4/Binary/${id}`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/pdf' },
      body: second,
    });
    expect(updated.status).toBe(200);
    for (const server of servers) {
      const current = await fetch(`${server.baseUrl}fhir/R4/Binary/${id}`, { headers: auth });
      expect(current.status).toBe(200);
      expect(Buffer.from(await current.arrayBuffer()).equals(second)).toBe(true);
      const old = await fetch(`${server.baseUrl}fhir/R4/Binary/${id}/_history/1`, { headers: auth });
      expect(old.headers.get('content-length')).toBe(String(first.length));
      expect(Buffer.from(await old.arrayBuffer()).equals(first)).toBe(true);
    }
  });

  it('a subscription fires exactly once per matching write, whichever process took the write', async () => {
    const name = family('Once');
    await create(servers[0], {
      resourceType: 'Subscription',
      status: 'active',
      reason: 'scale-out once',
      criteria: `Patient?name=${name}`,
      channel: { type: 'rest-hook', endpoint: `${receiver.url}once`, payload: FHIR_JSON },
    } as Resource);
    // Nine matching writes, three on each process, at once; three that do not match.
    const written = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        create(servers[i % 3], {
          resourceType: 'Patient',
          name: [{ family: i < 9 ? name : family('Other') }],
        } as Resource),
      ),
    );
    const matching = written.slice(0, 9).map((p) => p.id);
    const received = () =>
      receiver.requests.filter((r) => r.url === '/once').map((r) => (JSON.parse(r.body) as Resource).id as string);
    await waitFor(() => (matching.every((id) => received().includes(id)) ? true : undefined), 60_000);
    // Once every evaluation and delivery is done, nothing more can come: each arrived once.
    await subscriptionQueuesIdle();
    expect(received().sort()).toEqual([...matching].sort());
  });

  it('a subscription written through process 1 is in force on the others as soon as its write is answered', async () => {
    const name = family('Instant');
    // Processes 2 and 3 have just read the project's subscriptions (a write there evaluates them).
    await create(servers[1], { resourceType: 'Patient', name: [{ family: name }] } as Resource);
    await create(servers[2], { resourceType: 'Patient', name: [{ family: name }] } as Resource);
    await create(servers[0], {
      resourceType: 'Subscription',
      status: 'active',
      reason: 'scale-out instant',
      criteria: `Patient?name=${name}`,
      channel: { type: 'rest-hook', endpoint: `${receiver.url}instant`, payload: FHIR_JSON },
    } as Resource);
    // Written at once on the others, long before process 1's after-commit broadcast (LATE_BROADCAST_MS).
    const written = await Promise.all(
      [servers[1], servers[2]].map((server) =>
        create(server, { resourceType: 'Patient', name: [{ family: name }] } as Resource),
      ),
    );
    const ids = written.map((p) => p.id);
    const received = () =>
      receiver.requests.filter((r) => r.url === '/instant').map((r) => (JSON.parse(r.body) as Resource).id as string);
    await waitFor(() => (ids.every((id) => received().includes(id)) ? true : undefined), 30_000);
    await subscriptionQueuesIdle();
    expect(received().sort()).toEqual([...ids].sort());
  });

  it('a websocket client connected to process 1 gets notifications of writes on process 3', async () => {
    const name = family('Socket');
    const subscription = await create(servers[1], {
      resourceType: 'Subscription',
      status: 'active',
      reason: 'scale-out websocket',
      criteria: `Patient?name=${name}`,
      channel: { type: 'websocket' },
    } as Resource);
    const binding = await call(servers[2], 'GET', `fhir/R4/Subscription/${subscription.id}/$get-ws-binding-token`);
    expect(binding.status).toBe(200);
    const parameters = binding.json().parameter as { name: string; valueString?: string }[];
    const bindingToken = parameters.find((p) => p.name === 'token')?.valueString as string;

    const socket = new WebSocket(`${servers[0].baseUrl.replace(/^http/, 'ws')}ws/subscriptions-r4`);
    cleanups.push(() => socket.terminate());
    const messages: Record<string, unknown>[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token: bindingToken } }));
    await waitFor(() =>
      messages.some((m) => m.resourceType === 'Bundle' && JSON.stringify(m).includes('"handshake"')) ? true : undefined,
    );

    const patient = await create(servers[2], { resourceType: 'Patient', name: [{ family: name }] } as Resource);
    const notification = await waitFor(
      () =>
        messages.find(
          (m) =>
            m.resourceType === 'Bundle' &&
            JSON.stringify(m).includes('"event-notification"') &&
            JSON.stringify(m).includes(`Patient/${patient.id}`),
        ) as Bundle | undefined,
      30_000,
    );
    expect(notification.type).toBe('history');
    socket.close();
  });

  it('a bot a subscription triggers runs once per matching write', async () => {
    const botId = await deployBot(
      'once',
      `export async function handler(client, event) {
        await fetch('${receiver.url}bot-ran?id=' + event.input.id);
        return true;
      }`,
    );
    const name = family('Bot');
    await create(servers[2], {
      resourceType: 'Subscription',
      status: 'active',
      reason: 'scale-out bot',
      criteria: `Patient?name=${name}`,
      channel: { type: 'rest-hook', endpoint: `Bot/${botId}` },
    } as Resource);
    const written = await Promise.all(
      servers.map((server) => create(server, { resourceType: 'Patient', name: [{ family: name }] } as Resource)),
    );
    const ids = written.map((p) => p.id);
    const runs = () =>
      receiver.requests
        .filter((r) => r.url.startsWith('/bot-ran?'))
        .map((r) => new URL(r.url, receiver.url).searchParams.get('id') as string)
        .filter((id) => ids.includes(id));
    await waitFor(() => (ids.every((id) => runs().includes(id)) ? true : undefined), 60_000);
    await subscriptionQueuesIdle();
    expect(runs().sort()).toEqual([...ids].sort());
  });

  it('counts a rate limit across processes', async () => {
    const project = await call(servers[0], 'POST', 'fhir/R4/Project/$init', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'name', valueString: 'Rate limited' },
        { name: 'ownerEmail', valueString: `limited-${randomBytes(4).toString('hex')}@example.com` },
      ],
    });
    expect(project.status, JSON.stringify(project.json())).toBe(201);
    const projectId = project.json().id as string;
    const limit = 6;
    const current = await call(servers[1], 'GET', `fhir/R4/Project/${projectId}`);
    const updated = await call(servers[1], 'PUT', `fhir/R4/Project/${projectId}`, {
      ...current.json(),
      setting: [{ name: 'rateLimitRequestsPerMinute', valueInteger: limit }],
    });
    expect(updated.status, JSON.stringify(updated.json())).toBe(200);
    const client = await call(servers[2], 'POST', `admin/projects/${projectId}/client`, { name: 'limited client' });
    expect(client.status, JSON.stringify(client.json())).toBe(201);
    const basic = {
      authorization: `Basic ${Buffer.from(`${client.json().id as string}:${client.json().secret as string}`).toString('base64')}`,
    };
    // Fixed one-minute windows: begin early in a minute so that the requests never straddle two.
    const second = new Date().getSeconds();
    if (second > 45) {
      await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    }
    const statuses: number[] = [];
    for (let i = 0; i < limit + 3; i++) {
      statuses.push((await call(servers[i % 3], 'GET', 'fhir/R4/Patient?_count=1', undefined, basic)).status);
    }
    expect(statuses).toEqual([...Array<number>(limit).fill(200), 429, 429, 429]);
  });

  it(`enforces on process 2 an access policy changed through process 1 within HEARTH_AUTH_CACHE_MS`, async () => {
    const ownerEmail = `owner-${randomBytes(4).toString('hex')}@example.com`;
    const ownerPassword = `pw-${randomBytes(8).toString('hex')}`;
    const project = await call(servers[0], 'POST', 'fhir/R4/Project/$init', {
      resourceType: 'Parameters',
      parameter: [
        { name: 'name', valueString: 'Policies' },
        { name: 'ownerEmail', valueString: ownerEmail },
      ],
    });
    expect(project.status, JSON.stringify(project.json())).toBe(201);
    const projectId = project.json().id as string;
    const password = await call(servers[0], 'POST', 'admin/super/setpassword', {
      email: ownerEmail,
      password: ownerPassword,
    });
    expect(password.status, JSON.stringify(password.json())).toBe(200);
    const ownerToken = await signInOverHttp(servers[0].baseUrl, { email: ownerEmail, password: ownerPassword });
    const asOwner = { authorization: `Bearer ${ownerToken}` };
    const policy = (await call(
      servers[0],
      'POST',
      'fhir/R4/AccessPolicy',
      { resourceType: 'AccessPolicy', name: 'patients only', resource: [{ resourceType: 'Patient' }] },
      asOwner,
    ).then((r) => r.json())) as Resource & { id: string };
    expect(policy.id).toBeTruthy();
    const client = await call(
      servers[0],
      'POST',
      `admin/projects/${projectId}/client`,
      { name: 'policy client', accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
      asOwner,
    );
    expect(client.status, JSON.stringify(client.json())).toBe(201);
    const basic = {
      authorization: `Basic ${Buffer.from(`${client.json().id as string}:${client.json().secret as string}`).toString('base64')}`,
    };
    const search = (type: string) => call(servers[1], 'GET', `fhir/R4/${type}?_count=1`, undefined, basic);
    // Process 2 reads (and caches) the session under the first policy.
    expect((await search('Patient')).status).toBe(200);
    expect((await search('Observation')).status).toBe(403);

    const changed = await call(
      servers[0],
      'PUT',
      `fhir/R4/AccessPolicy/${policy.id}`,
      { ...policy, name: 'observations only', resource: [{ resourceType: 'Observation' }] },
      asOwner,
    );
    expect(changed.status, JSON.stringify(changed.json())).toBe(200);
    const answered = Date.now();
    // Process 2 cached the session before the change was made: HEARTH_AUTH_CACHE_MS after the
    // change was answered, that entry has expired, whatever the timing of the requests in between.
    await new Promise((r) => setTimeout(r, answered + AUTH_CACHE_MS - Date.now()));
    expect((await search('Patient')).status).toBe(403);
    expect((await search('Observation')).status).toBe(200);
  });

  it('a process killed in the middle of a job: another process runs the job', async () => {
    const botId = await deployBot(
      'held',
      `export async function handler(client, event) {
        const res = await fetch(event.input.url);
        return { answered: res.status };
      }`,
    );
    const held = receiver.hold('/held');
    const accepted = await call(
      servers[1],
      'POST',
      `fhir/R4/Bot/${botId}/$execute`,
      { url: `${receiver.url}held` },
      { authorization: `Bearer ${token}`, prefer: 'respond-async' },
    );
    expect(accepted.status).toBe(202);
    const statusPath = new URL(accepted.headers.get('content-location') as string).pathname.slice(1);
    const heldRequests = () => receiver.requests.filter((r) => r.url === '/held');
    await waitFor(() => (heldRequests().length === 1 ? true : undefined), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${servers.map((s) => s.output().slice(-3000)).join('\n---\n')}`);
    });
    const runner = serverOfConnection(servers, heldRequests()[0].remotePort);
    expect(runner, 'the process running the job').toBeDefined();
    (runner as ServerProcess).proc.kill('SIGKILL');
    expect((await (runner as ServerProcess).exited).signal).toBe('SIGKILL');
    const survivors = servers.filter((server) => server !== runner);

    // Its lease runs out; a survivor takes the job and runs the bot again.
    await waitFor(() => (heldRequests().length === 2 ? true : undefined), (LEASE_SECONDS * 3 + 30) * 1000).catch(
      (err: unknown) => {
        throw new Error(`${String(err)}: ${survivors.map((s) => s.output().slice(-3000)).join('\n---\n')}`);
      },
    );
    expect(survivors).toContain(serverOfConnection(survivors, heldRequests()[1].remotePort));
    held.release();
    const done = await waitFor(async () => {
      const res = await call(survivors[0], 'GET', statusPath);
      return res.status === 200 ? res.json() : undefined;
    }, 30_000);
    expect(JSON.stringify(done)).toContain('answered');
    expect(heldRequests()).toHaveLength(2);
  }, 150_000);
});
