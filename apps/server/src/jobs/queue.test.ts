import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { createPool, type Pool } from '../platform/postgres.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { JobQueue, type JobDefinition } from './queue.js';

let db: TestDatabase;
let pool: Pool;
const logger = createLogger('silent');

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool({ connectionString: db.url, max: 10, statementTimeoutMs: 30000 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

function queue(workersEnabled: boolean, ...definitions: JobDefinition<never>[]): JobQueue {
  return queueWith({ workersEnabled }, ...definitions);
}

function queueWith(
  options: {
    workersEnabled: boolean;
    concurrency?: number;
    maintenanceIntervalSeconds?: number;
    leaseSeconds?: number;
  },
  ...definitions: JobDefinition<never>[]
): JobQueue {
  const q = new JobQueue({
    pool,
    logger,
    concurrency: 4,
    pollingIntervalMs: 500,
    retryDelaySeconds: 1,
    ...options,
  });
  for (const d of definitions) {
    q.define(d as JobDefinition<unknown>);
  }
  return q;
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 15000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error('timed out');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('JobQueue', () => {
  it('keeps jobs queued by a process without workers, and runs them in a later process', async () => {
    const seen: number[] = [];
    const handler = async (data: { n: number }) => {
      seen.push(data.n);
    };
    const producer = queue(false, { name: 'durable', handler } as JobDefinition<never>);
    await producer.start();
    await producer.send('durable', { n: 1 });
    await producer.sendMany('durable', [{ data: { n: 2 } }, { data: { n: 3 } }]);
    await producer.stop();
    expect(seen).toEqual([]);

    const consumer = queue(true, { name: 'durable', handler } as JobDefinition<never>);
    await consumer.start();
    await waitFor(() => seen.length === 3);
    expect(seen.sort()).toEqual([1, 2, 3]);
    await consumer.stop();
  });

  it('runs jobs on every process that enables workers', async () => {
    // Each job waits until both processes hold one: with one job at a time per process, the second
    // job can only be taken by the other process, so this finishes only if both run workers.
    const takenBy = new Set<string>();
    const definition = (processName: string): JobDefinition<never> =>
      ({
        name: 'shared',
        concurrency: 1,
        handler: async () => {
          takenBy.add(processName);
          await waitFor(() => takenBy.size === 2);
        },
      }) as JobDefinition<never>;
    const first = queueWith({ workersEnabled: true, concurrency: 1 }, definition('first'));
    const second = queueWith({ workersEnabled: true, concurrency: 1 }, definition('second'));
    const producer = queue(false, definition('producer'));
    await Promise.all([first.start(), second.start(), producer.start()]);
    const ids = [await producer.send('shared', { n: 1 }), await producer.send('shared', { n: 2 })];
    await waitFor(async () => {
      const states = await Promise.all(ids.map((id) => producer.getJob('shared', id as string)));
      return states.every((job) => job?.state === 'completed');
    });
    expect([...takenBy].sort()).toEqual(['first', 'second']);
    await Promise.all([first.stop(), second.stop(), producer.stop()]);
  });

  it('runs a job again on another process when the process running it died mid-job', async () => {
    let firstAttemptStarted = false;
    const attempts: number[] = [];
    const lost = queueWith({ workersEnabled: true }, {
      name: 'orphaned',
      expireInSeconds: 1,
      retryLimit: 2,
      handler: async (_data: object, attempt) => {
        attempts.push(attempt.retryCount);
        firstAttemptStarted = true;
        // This process "dies": the attempt never ends.
        await new Promise(() => undefined);
      },
    } as JobDefinition<never>);
    await lost.start();
    const id = await lost.send('orphaned', {});
    await waitFor(() => firstAttemptStarted);
    // Stop without waiting for the running attempt: it stays active in the database, as after a crash.
    await lost.stop(10);
    expect((await lost.getJob('orphaned', id as string))?.state).toBe('active');

    const survivor = queueWith({ workersEnabled: true, maintenanceIntervalSeconds: 1 }, {
      name: 'orphaned',
      expireInSeconds: 1,
      retryLimit: 2,
      handler: async (_data: object, attempt) => {
        attempts.push(attempt.retryCount);
        return { recovered: true };
      },
    } as JobDefinition<never>);
    await survivor.start();
    await waitFor(async () => (await survivor.getJob('orphaned', id as string))?.state === 'completed', 30000);
    expect(attempts).toEqual([0, 1]);
    expect((await survivor.getJob('orphaned', id as string))?.output).toEqual({ recovered: true });
    await survivor.stop();
  });

  it('keeps a job that outlives its lease with its live process, and runs it elsewhere a lease after that process died', async () => {
    // Both jobs may run for hours (as async operations may): only the lease says whether their process lives.
    const attempts: { job: string; retryCount: number }[] = [];
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const definition = (handler: (data: { job: string }) => Promise<unknown>) =>
      ({
        name: 'leased',
        expireInSeconds: 6 * 3600,
        retryLimit: 2,
        handler: async (data: { job: string }, attempt) => {
          attempts.push({ job: data.job, retryCount: attempt.retryCount });
          return handler(data);
        },
      }) as JobDefinition<never>;
    const options = { workersEnabled: true, leaseSeconds: 1, maintenanceIntervalSeconds: 1 };
    const alive = queueWith(
      options,
      definition(() => gate),
    );
    await alive.start();
    const kept = await alive.send('leased', { job: 'kept' });
    await waitFor(() => attempts.length === 1);
    // Four leases and several maintenance rounds: the renewed attempt is still the only one.
    await new Promise((r) => setTimeout(r, 4000));
    expect((await alive.getJob('leased', kept as string))?.state).toBe('active');
    release();
    await waitFor(async () => (await alive.getJob('leased', kept as string))?.state === 'completed');
    await alive.stop();
    expect(attempts).toEqual([{ job: 'kept', retryCount: 0 }]);

    const dying = queueWith(
      options,
      definition(() => new Promise(() => undefined)),
    );
    await dying.start();
    const orphan = await dying.send('leased', { job: 'orphan' });
    await waitFor(() => attempts.length === 2);
    // The process "dies": its attempt stays active in the database and nobody renews it.
    await dying.stop(10);
    const survivor = queueWith(
      options,
      definition(async () => ({ recovered: true })),
    );
    await survivor.start();
    await waitFor(async () => (await survivor.getJob('leased', orphan as string))?.state === 'completed', 20000);
    expect(attempts.slice(1)).toEqual([
      { job: 'orphan', retryCount: 0 },
      { job: 'orphan', retryCount: 1 },
    ]);
    await survivor.stop();
  });

  it('retries a failing job with growing delays until it succeeds', async () => {
    const attempts: { at: number; retryCount: number }[] = [];
    const q = queue(true, {
      name: 'flaky',
      retryLimit: 3,
      handler: async (_data: object, attempt) => {
        attempts.push({ at: Date.now(), retryCount: attempt.retryCount });
        if (attempts.length < 3) {
          throw new Error('not yet');
        }
        return { ok: true };
      },
    } as JobDefinition<never>);
    await q.start();
    const id = await q.send('flaky', {});
    await waitFor(async () => (await q.getJob('flaky', id as string))?.state === 'completed', 20000);
    expect(attempts.map((a) => a.retryCount)).toEqual([0, 1, 2]);
    const firstGap = attempts[1].at - attempts[0].at;
    const secondGap = attempts[2].at - attempts[1].at;
    // Backoff: retry_delay * 2^n / 2 plus jitter of as much again: 1-2 s, then 2-4 s.
    expect(firstGap).toBeGreaterThanOrEqual(900);
    expect(secondGap).toBeGreaterThanOrEqual(1900);
    const job = await q.getJob('flaky', id as string);
    expect(job?.output).toEqual({ ok: true });
    await q.stop();
  });

  it('gives up after the retry limit and records the failure', async () => {
    const q = queue(true, {
      name: 'doomed',
      retryLimit: 0,
      handler: async () => {
        throw new Error('always');
      },
    } as JobDefinition<never>);
    await q.start();
    const id = await q.send('doomed', {});
    await waitFor(async () => (await q.getJob('doomed', id as string))?.state === 'failed');
    expect((await q.getJob('doomed', id as string))?.output).toMatchObject({ message: 'always' });
    await q.stop();
  });

  it('runs jobs concurrently, and a slow job does not hold back the others', async () => {
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    const q = queue(true, {
      name: 'parallel',
      handler: async (data: { n: number; ms: number }) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, data.ms));
        running--;
        done.push(data.n);
      },
    } as JobDefinition<never>);
    await q.start();
    await q.send('parallel', { n: 0, ms: 1500 });
    await new Promise((r) => setTimeout(r, 50));
    await q.sendMany(
      'parallel',
      [1, 2, 3, 4, 5, 6].map((n) => ({ data: { n, ms: 50 } })),
    );
    await waitFor(() => done.length === 7);
    expect(done[done.length - 1]).toBe(0);
    expect(peak).toBeGreaterThanOrEqual(2);
    expect(peak).toBeLessThanOrEqual(4);
    await q.stop();
  });

  it('stops gracefully: a running job finishes before stop() returns', async () => {
    let finished = false;
    let started = false;
    const q = queue(true, {
      name: 'graceful',
      handler: async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 500));
        finished = true;
      },
    } as JobDefinition<never>);
    await q.start();
    const id = await q.send('graceful', {});
    await waitFor(() => started);
    await q.stop(5000);
    expect(finished).toBe(true);
    const job = await new JobQueue({
      pool,
      logger,
      workersEnabled: false,
      concurrency: 1,
      pollingIntervalMs: 500,
      retryDelaySeconds: 1,
    }).getJob('graceful', id as string);
    expect(job?.state).toBe('completed');
  });

  it('records an attempt done only once its completeAfter work settles, while the worker runs the next job', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const ran: number[] = [];
    const q = queueWith({ workersEnabled: true, concurrency: 1 }, {
      name: 'deferred',
      concurrency: 1,
      handler: async (data: { n: number }, attempt) => {
        ran.push(data.n);
        if (data.n === 1) {
          attempt.completeAfter?.(gate);
        }
      },
    } as JobDefinition<never>);
    await q.start();
    const first = await q.send('deferred', { n: 1 });
    await waitFor(() => ran.includes(1));
    const second = await q.send('deferred', { n: 2 });
    await waitFor(async () => (await q.getJob('deferred', second as string))?.state === 'completed');
    expect((await q.getJob('deferred', first as string))?.state).toBe('active');
    release();
    await waitFor(async () => (await q.getJob('deferred', first as string))?.state === 'completed');
    await q.stop();
  });
});
