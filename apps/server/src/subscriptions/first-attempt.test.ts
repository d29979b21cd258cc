import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { FHIR_JSON, post, waitFor } from '../bots/testing.js';
import { DELIVER_QUEUE, EVALUATE_QUEUE } from './evaluate.js';
import { startReceiver, type Receiver } from './testing.js';

// The first attempt of a rest-hook is made inside the evaluation job (first-attempt.ts).
// `a` owns the database and runs no jobs; `b` runs them (and dies in the last test); `c` comes later.
let a: TestApp;
let b: TestApp;
let c: TestApp | undefined;
let bClosed = false;
let receiver: Receiver;
const config = {
  outboundAllowList: ['127.0.0.1'],
  // Requests may take 5 s: an attempt outlives the evaluation job's 1 s budget and is backed by a job.
  outboundTimeoutMs: 5000,
  jobRetryDelaySeconds: 1,
  jobPollingIntervalMs: 500,
};

beforeAll(async () => {
  receiver = await startReceiver();
  a = await createTestApp({ listen: true, config: { ...config, workersEnabled: false } });
  b = await createTestApp({ listen: true, config, db: a.db });
});
afterAll(async () => {
  await c?.close();
  if (!bClosed) {
    await b?.close();
  }
  await a?.close();
  await receiver?.close();
});

async function create<T extends Resource>(t: TestApp, resource: T): Promise<T & { id: string }> {
  const res = await post(t, `fhir/R4/${resource.resourceType}`, resource, FHIR_JSON);
  if (res.status !== 201) {
    throw new Error(`create failed: ${res.status} ${res.text}`);
  }
  return res.json() as T & { id: string };
}

function hook(path: string, criteria: string): Resource {
  return {
    resourceType: 'Subscription',
    status: 'active',
    reason: 'first attempt',
    criteria,
    channel: { type: 'rest-hook', endpoint: `${receiver.url}${path}`, payload: 'application/fhir+json' },
  };
}

interface JobRow {
  name: string;
  state: string;
  start_after: Date;
  data: { subscriptionId?: string; firstAttempt?: number; changes?: { id: string }[] };
}

/** Jobs of both subscription queues about a subscription or a resource id. */
async function jobs(t: TestApp, subscriptionId: string, resourceId: string): Promise<JobRow[]> {
  const rows = await t.pool.query<JobRow>(
    `SELECT name, state, start_after, data FROM pgboss.job WHERE name = ANY($1::text[])
     AND (data->>'subscriptionId' = $2 OR data::text LIKE $3) ORDER BY created_on`,
    [[EVALUATE_QUEUE, DELIVER_QUEUE], subscriptionId, `%${resourceId}%`],
  );
  return rows.rows;
}

async function audits(t: TestApp, subscriptionId: string): Promise<{ outcome?: string; outcomeDesc?: string }[]> {
  const rows = await t.pool.query<{ content: string }>(
    `SELECT content FROM "AuditEvent" WHERE NOT deleted AND content LIKE $1 ORDER BY last_updated`,
    [`%Subscription/${subscriptionId}%`],
  );
  return rows.rows.map((r) => JSON.parse(r.content) as { outcome?: string; outcomeDesc?: string });
}

function arrivals(path: string, id: string): number {
  return receiver.requests.filter((r) => r.url === path && r.body.includes(id)).length;
}

describe('first rest-hook attempt inside the evaluation job', () => {
  it('delivers without a delivery job, and records the attempt', async () => {
    const sub = await create(b, hook('inline', 'Device?manufacturer=inline-co'));
    const device = await create(b, { resourceType: 'Device', manufacturer: 'inline-co' });
    await waitFor(() => arrivals('/inline', device.id) === 1 || undefined);
    const recorded = await waitFor(async () => {
      const list = await audits(a, sub.id);
      return list.length > 0 ? list : undefined;
    });
    expect(recorded.map((e) => e.outcome)).toEqual(['0']);
    expect(recorded[0].outcomeDesc).toContain('attempt 1 of 5');
    const queued = await jobs(a, sub.id, device.id);
    expect(queued.filter((j) => j.name === DELIVER_QUEUE)).toEqual([]);
    expect(queued.filter((j) => j.name === EVALUATE_QUEUE)).toHaveLength(1);
  });

  it('queues the retries of a failed first attempt, counting attempts from 2', async () => {
    const sub = await create(b, hook('flaky', 'Device?manufacturer=flaky-co'));
    receiver.failNext(1);
    const device = await create(b, { resourceType: 'Device', manufacturer: 'flaky-co' });
    await waitFor(() => arrivals('/flaky', device.id) === 2 || undefined, 20000);
    const recorded = await waitFor(async () => {
      const list = await audits(a, sub.id);
      return list.length >= 2 ? list : undefined;
    });
    expect(recorded.map((e) => e.outcome)).toEqual(['4', '0']);
    expect(recorded[0].outcomeDesc).toContain('answered 500 Internal Server Error (attempt 1 of 5)');
    expect(recorded[1].outcomeDesc).toContain('attempt 2 of 5');
    const retries = (await jobs(a, sub.id, device.id)).filter((j) => j.name === DELIVER_QUEUE);
    expect(retries).toHaveLength(1);
    expect(retries[0].data.firstAttempt).toBe(2);
  });

  it('keeps the evaluation job active while the attempt runs, then backs a late attempt with a job it cancels once answered', async () => {
    const held = receiver.hold('/late');
    const sub = await create(b, hook('late', 'Device?manufacturer=late-co'));
    const device = await create(b, { resourceType: 'Device', manufacturer: 'late-co' });
    await waitFor(() => held.pending() === 1 || undefined);
    // Unanswered: the evaluation is not done, so a process dying now leaves it to run again.
    const during = await jobs(a, sub.id, device.id);
    expect(during.map((j) => [j.name, j.state])).toEqual([[EVALUATE_QUEUE, 'active']]);
    // Past the budget: a delivery job of the same attempt waits until after the attempt's time limit.
    const backed = await waitFor(async () => {
      const list = await jobs(a, sub.id, device.id);
      const job = list.find((j) => j.name === DELIVER_QUEUE);
      return job && list.find((j) => j.name === EVALUATE_QUEUE)?.state === 'completed' ? job : undefined;
    });
    expect(backed.state).toBe('created');
    expect(backed.start_after.getTime()).toBeGreaterThan(Date.now() + 5000);
    // The attempt's AuditEvent cannot be written while this lock is held (reads still can).
    const locker = await a.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "AuditEvent" IN EXCLUSIVE MODE');
      held.release();
      await waitFor(() => arrivals('/late', device.id) === 1 || undefined);
      await new Promise((r) => setTimeout(r, 1000));
      // Answered but not yet recorded: the backing job stays, so a crash now would make the attempt again.
      const waiting = (await jobs(a, sub.id, device.id)).find((j) => j.name === DELIVER_QUEUE);
      expect(waiting?.state).toBe('created');
      expect(await audits(a, sub.id)).toEqual([]);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    await waitFor(async () => {
      const job = (await jobs(a, sub.id, device.id)).find((j) => j.name === DELIVER_QUEUE);
      return job?.state === 'cancelled' || undefined;
    });
    expect(arrivals('/late', device.id)).toBe(1);
    expect((await audits(a, sub.id)).map((e) => e.outcome)).toEqual(['0']);
  });

  it('delivers from a later process when the one making the first attempt dies before it is answered', async () => {
    const held = receiver.hold('/crash');
    const sub = await create(b, hook('crash', 'Device?manufacturer=crash-co'));
    const device = await create(b, { resourceType: 'Device', manufacturer: 'crash-co' });
    await waitFor(() => held.pending() === 1 || undefined);
    await waitFor(async () => (await jobs(a, sub.id, device.id)).some((j) => j.name === DELIVER_QUEUE) || undefined);
    // Process B goes away with its attempt unanswered: its database pool closes, so it can settle nothing.
    await b.close();
    bClosed = true;
    held.release();
    // A process started afterwards runs the backing job once the attempt's time limit has passed.
    c = await createTestApp({ listen: true, config, db: a.db });
    await waitFor(() => arrivals('/crash', device.id) >= 2 || undefined, 30000);
    const recorded = await waitFor(async () => {
      const list = (await audits(a, sub.id)).filter((e) => e.outcome === '0');
      return list.length > 0 ? list : undefined;
    });
    expect(recorded[0].outcomeDesc).toContain('attempt 1 of 5');
  }, 40000);
});
