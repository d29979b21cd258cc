// Crash recovery across real processes: a server killed with changes heard but not yet queued for
// subscription evaluation (its batch window widened to a minute) loses no notification, because
// another process on the same database sees its heartbeat stop and re-queues them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { buildServerBundle, signInOverHttp, startServerProcess, type ServerBundle } from '../test/process.js';
import { waitFor } from '../bots/testing.js';
import { startReceiver, type Receiver } from './testing.js';

const ADMIN = { email: 'recovery-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const FHIR_JSON = 'application/fhir+json';

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;
let db: TestDatabase;
let receiver: Receiver;

beforeAll(async () => {
  bundle = await buildServerBundle('recovery');
  db = await createTestDatabase();
  cleanups.push(() => db.drop());
  receiver = await startReceiver();
  cleanups.push(() => receiver.close());
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

function start(env: Record<string, string>) {
  return startServerProcess(
    (bundle as ServerBundle).main,
    {
      DATABASE_URL: db.url,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_OUTBOUND_ALLOW_LIST: '127.0.0.1',
      HEARTH_JOB_POLLING_INTERVAL_MS: '500',
      // A process silent for 4 beats (1 s) is dead.
      HEARTH_SUBSCRIPTION_HEARTBEAT_MS: '250',
      ...env,
    },
    cleanups,
  );
}

async function create(baseUrl: string, token: string, resource: Resource): Promise<Resource> {
  const res = await fetch(`${baseUrl}fhir/R4/${resource.resourceType}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': FHIR_JSON },
    body: JSON.stringify(resource),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Resource;
}

describe('subscription crash recovery', () => {
  it('a process killed before queuing the evaluation of an acknowledged write: another delivers its notification', async () => {
    // Process A holds every change it hears for a minute before queuing its evaluation.
    const a = await start({ HEARTH_SUBSCRIPTION_BATCH_WINDOW_MS: '60000' });
    const tokenA = await signInOverHttp(a.baseUrl, ADMIN);
    const family = `Crash${randomBytes(3).toString('hex')}`;
    await create(a.baseUrl, tokenA, {
      resourceType: 'Subscription',
      status: 'active',
      reason: 'crash recovery',
      criteria: `Patient?name=${family}`,
      channel: { type: 'rest-hook', endpoint: `${receiver.url}crash`, payload: FHIR_JSON },
    } as Resource);
    const patient = await create(a.baseUrl, tokenA, { resourceType: 'Patient', name: [{ family }] } as Resource);
    a.proc.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');

    // Process B (default batch window) finds A's heartbeat stopped and queues A's last changes.
    const b = await start({});
    const notification = await waitFor(
      () => receiver.requests.find((r) => r.url === '/crash' && r.body.includes(patient.id as string)),
      30_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}; process B printed: ${b.output()}`);
    });
    expect(JSON.parse(notification.body)).toMatchObject({ resourceType: 'Patient', id: patient.id });
  }, 90_000);
});
