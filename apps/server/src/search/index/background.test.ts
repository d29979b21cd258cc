import { describe, expect, it } from 'vitest';
import type { JobDefinition, JobQueue } from '../../jobs/queue.js';
import type { Logger } from '../../platform/logger.js';
import type { Pool } from '../../platform/postgres.js';
import type { WriteEvent } from '../../storage/types.js';
import type { SearchParamRegistry } from '../registry/project-params.js';
import { REINDEX_QUEUE, reindexInBackground, ReindexTracker, type ReindexJob } from './background.js';
import type { Indexer } from './indexer.js';

/** A queue that keeps what is defined and sent, and runs nothing by itself. */
function fakeQueue() {
  const sent: ReindexJob[] = [];
  let handler: JobDefinition<ReindexJob>['handler'] | undefined;
  const jobs = {
    define: (d: JobDefinition<ReindexJob>) => (handler = d.handler),
    send: async (_name: string, data: ReindexJob) => {
      sent.push(data);
      return 'job-1';
    },
  } as unknown as JobQueue;
  return {
    jobs,
    sent,
    run: (job: ReindexJob) => handler!(job, { id: 'job-1', queue: REINDEX_QUEUE, retryCount: 0, retryLimit: 5 }),
  };
}

const event = (base: string[], previousBase?: string[]): WriteEvent =>
  ({
    interaction: previousBase ? 'update' : 'create',
    version: { resourceType: 'SearchParameter', projectId: 'p1', resource: { resourceType: 'SearchParameter', base } },
    previous: previousBase
      ? {
          resourceType: 'SearchParameter',
          projectId: 'p1',
          resource: { resourceType: 'SearchParameter', base: previousBase },
        }
      : undefined,
  }) as unknown as WriteEvent;

describe('background reindex after a SearchParameter write', () => {
  it('queues one job per project with the types before and after, and tracks it until it ends', async () => {
    const { jobs, sent, run } = fakeQueue();
    const tracker = new ReindexTracker();
    const batches: string[] = [];
    const indexer = {
      reindexInBackground: false,
      reindexBatch: async (_c: unknown, _p: string, type: string) => {
        batches.push(type);
        return { count: 0 };
      },
    } as unknown as Indexer;
    const client = { query: async () => ({ rows: [] }), release: () => undefined };
    const listener = reindexInBackground(jobs, {
      pool: { connect: async () => client } as unknown as Pool,
      indexer,
      registry: { reload: async () => new Set<string>() } as unknown as SearchParamRegistry,
      logger: { info: () => undefined, error: () => undefined } as unknown as Logger,
      tracker,
    });
    expect(indexer.reindexInBackground).toBe(true);

    listener([
      event(['Patient'], ['Observation']),
      { ...event(['Patient']), version: { resourceType: 'Patient' } } as WriteEvent,
    ]);
    expect(sent).toEqual([{ projectId: 'p1', types: ['Patient', 'Observation'] }]);
    expect(tracker.has('p1', 'Patient')).toBe(true);
    expect(tracker.has('p1', 'Observation')).toBe(true);
    expect(tracker.has('p2', 'Patient')).toBe(false);

    await run(sent[0]);
    expect(batches).toEqual(['Patient', 'Observation']);
    expect(tracker.has('p1', 'Patient')).toBe(false);
    expect(tracker.has('p1', 'Observation')).toBe(false);
  });

  it('queues nothing for writes of other types', () => {
    const { jobs, sent } = fakeQueue();
    const listener = reindexInBackground(jobs, {
      pool: {} as Pool,
      indexer: {} as Indexer,
      registry: {} as SearchParamRegistry,
      logger: {} as Logger,
      tracker: new ReindexTracker(),
    });
    listener([
      { interaction: 'create', version: { resourceType: 'Patient', projectId: 'p1' } } as unknown as WriteEvent,
    ]);
    expect(sent).toEqual([]);
  });
});
