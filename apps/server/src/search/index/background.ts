import type { Resource } from '@hearth/core';
import type { JobQueue } from '../../jobs/queue.js';
import type { Logger } from '../../platform/logger.js';
import { withTransaction, type Pool } from '../../platform/postgres.js';
import type { WriteEvent, WriteListener } from '../../storage/types.js';
import type { SearchParamRegistry } from '../registry/project-params.js';
import type { Indexer } from './indexer.js';

/** The job queue of reindexing after a project's SearchParameter changed. */
export const REINDEX_QUEUE = 'search-reindex';

export interface ReindexJob {
  projectId: string;
  /** The resource types the changed parameters apply to (before and after the change). */
  types: string[];
}

/**
 * The reindex jobs this process queued and has not seen end, per project and type: searches on
 * a project's own parameters of such a type say their results may be incomplete. (A job queued
 * by another process is not known here.)
 */
export class ReindexTracker {
  private readonly pending = new Map<string, number>();

  start(projectId: string, types: Iterable<string>): void {
    for (const t of types) this.pending.set(`${projectId}|${t}`, (this.pending.get(`${projectId}|${t}`) ?? 0) + 1);
  }

  finish(projectId: string, types: Iterable<string>): void {
    for (const t of types) {
      const key = `${projectId}|${t}`;
      const n = (this.pending.get(key) ?? 0) - 1;
      if (n > 0) this.pending.set(key, n);
      else this.pending.delete(key);
    }
  }

  has(projectId: string, type: string): boolean {
    return this.pending.has(`${projectId}|${type}`);
  }
}

interface ReindexDeps {
  pool: Pool;
  indexer: Indexer;
  registry: SearchParamRegistry;
  logger: Logger;
  tracker: ReindexTracker;
}

/** The types a SearchParameter version applies to. */
function basesOf(resource: Resource | undefined): string[] {
  const base = (resource as { base?: unknown } | undefined)?.base;
  return Array.isArray(base) ? base.filter((b): b is string => typeof b === 'string') : [];
}

/** Per project, the types whose index a batch of committed writes made stale. */
function staleTypes(events: WriteEvent[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const e of events) {
    if (e.version.resourceType !== 'SearchParameter') continue;
    const types = out.get(e.version.projectId) ?? new Set<string>();
    [...basesOf(e.version.resource), ...basesOf(e.previous?.resource)].forEach((t) => types.add(t));
    out.set(e.version.projectId, types);
  }
  return out;
}

/**
 * Reindexes one project's resources of some types, a batch per transaction (a large type never
 * holds one long transaction or its locks). The project's parameters are re-read first: this
 * may run in another process than the write.
 */
export async function runReindexJob(deps: ReindexDeps, job: ReindexJob): Promise<number> {
  const affected = await deps.registry.reload(deps.pool, job.projectId);
  let count = 0;
  for (const type of new Set([...job.types, ...affected])) {
    let after: string | undefined = '';
    while (after !== undefined) {
      const from: string = after;
      const batch = await withTransaction(deps.pool, (client) =>
        deps.indexer.reindexBatch(client, job.projectId, type, from),
      );
      count += batch.count;
      after = batch.last;
    }
  }
  deps.logger.info({ projectId: job.projectId, types: job.types, resources: count }, 'search: reindexed');
  return count;
}

/**
 * Moves reindexing after a SearchParameter write to the job queue (hl7.org/fhir/R4/searchparameter.html:
 * existing resources become searchable by a new parameter once reindexed). Defines the queue
 * (before the queue starts) and returns the write listener that queues a job after each commit.
 * New and updated resources are indexed with the new parameter at once, in their own writes.
 */
export function reindexInBackground(jobs: JobQueue, deps: ReindexDeps): WriteListener {
  jobs.define<ReindexJob>({
    name: REINDEX_QUEUE,
    // One at a time per process: reindexing is bulk database work, requests come first.
    concurrency: 1,
    retryLimit: 5,
    expireInSeconds: 6 * 60 * 60,
    handler: (job) => runReindexJob(deps, job).finally(() => deps.tracker.finish(job.projectId, job.types)),
  });
  deps.indexer.reindexInBackground = true;
  return (events) => {
    for (const [projectId, types] of staleTypes(events)) {
      deps.tracker.start(projectId, types);
      jobs.send<ReindexJob>(REINDEX_QUEUE, { projectId, types: [...types] }).catch((err: unknown) => {
        deps.tracker.finish(projectId, types);
        deps.logger.error({ err, projectId }, 'search: could not queue a reindex');
      });
    }
  };
}
