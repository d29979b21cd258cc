// The server-wide reindex: batches, progress counts, cancellation, and the job's output.
import type { Resource } from '@hearth/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import type { AsyncJobContext, AsyncJobHandler, AsyncJobs, ProgressCounts } from './async-job.js';
import { defineServerReindex, reindexServer, SERVER_REINDEX, type ServerReindexParams } from './reindex.js';

let t: TestApp;
let patients: number;

beforeAll(async () => {
  t = await createTestApp();
  const repo = t.services.systemRepo(t.testProject.projectId);
  for (let i = 0; i < 5; i++) {
    await repo.createResource({ resourceType: 'Patient', name: [{ family: `Batch${i}` }] });
  }
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM resource WHERE resource_type = 'Patient' AND NOT deleted`,
  );
  patients = rows[0].n;
});
afterAll(async () => {
  await t?.close();
});

const deps = (batchSize: number) => ({ pool: t.pool, indexer: t.services.reindexer, batchSize });

async function familyRows(): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM search_string WHERE resource_type = 'Patient' AND code = 'family' AND value LIKE 'batch%'`,
  );
  return rows[0].n;
}

describe('reindexServer', () => {
  it('goes batch by batch, telling done of total after each', async () => {
    await t.pool.query(`DELETE FROM search_string WHERE resource_type = 'Patient'`);
    const seen: ProgressCounts[] = [];
    const report = await reindexServer(
      deps(2),
      { types: ['Patient'] },
      {
        progress: async (counts, type) => {
          expect(type).toBe('Patient');
          seen.push(counts);
        },
      },
    );
    const expected: ProgressCounts[] = [];
    for (let done = 2; done < patients + 2; done += 2) {
      expected.push({ done: Math.min(done, patients), total: patients });
    }
    expect(seen).toEqual(expected);
    expect(report).toEqual({
      types: [{ resourceType: 'Patient', count: patients }],
      total: patients,
      cancelled: false,
    });
    expect(await familyRows()).toBe(5);
  });

  it('stops after the batch during which it was cancelled', async () => {
    const report = await reindexServer(deps(2), { types: ['Patient'] }, { cancelled: async () => true });
    expect(report).toEqual({ types: [{ resourceType: 'Patient', count: 2 }], total: 2, cancelled: true });
  });
});

describe('the reindex job', () => {
  function definedHandler(reportEveryMs: number): AsyncJobHandler<ServerReindexParams> {
    let handler: AsyncJobHandler<ServerReindexParams> | undefined;
    const jobs = {
      define: (kind: string, h: AsyncJobHandler<ServerReindexParams>) => {
        expect(kind).toBe(SERVER_REINDEX);
        handler = h;
      },
    } as unknown as AsyncJobs;
    defineServerReindex(jobs, deps(2), reportEveryMs);
    return handler as AsyncJobHandler<ServerReindexParams>;
  }

  function context(cancelAfter = Infinity) {
    const progress: { fraction: number; message?: string; counts?: ProgressCounts }[] = [];
    const job: AsyncJobContext = {
      asyncJobId: 'job',
      projectId: t.testProject.projectId,
      repo: t.services.systemRepo(t.testProject.projectId),
      progress: async (fraction, message, counts) => {
        progress.push({ fraction, message, counts });
      },
      cancelled: async () => progress.length >= cancelAfter,
    };
    return { job, progress };
  }

  it('records progress with counts and answers a Parameters of the counts per type', async () => {
    const { job, progress } = context();
    const output = (await definedHandler(0)({ types: ['Patient'] }, job)) as Resource;
    expect(progress[0]).toEqual({
      fraction: 2 / patients,
      message: `2/${patients} resources (Patient)`,
      counts: { done: 2, total: patients },
    });
    expect(progress[progress.length - 1].counts).toEqual({ done: patients, total: patients });
    expect(output).toEqual({
      resourceType: 'Parameters',
      parameter: [
        { name: 'total', valueInteger: patients },
        {
          name: 'type',
          part: [
            { name: 'resourceType', valueCode: 'Patient' },
            { name: 'count', valueInteger: patients },
          ],
        },
      ],
    });
  });

  it('records progress at most once per interval, and always the last', async () => {
    const { job, progress } = context();
    await definedHandler(60_000)({ types: ['Patient'] }, job);
    expect(progress.map((p) => p.counts)).toEqual([
      { done: 2, total: patients },
      { done: patients, total: patients },
    ]);
  });

  it('ends without output once cancelled', async () => {
    const { job, progress } = context(1);
    expect(await definedHandler(0)({ types: ['Patient'] }, job)).toBeUndefined();
    expect(progress).toHaveLength(1);
  });
});
