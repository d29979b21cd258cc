// The super admin's reindex: rewrites the search index rows (and the terminology tables of code
// systems, value sets and concept maps) of every current resource of some types or of all, in
// every project. Needed after an upgrade that changes how values are indexed, or to repair rows.
import type { Parameters } from '@hearth/core';
import { withTransaction, type Pool } from '../platform/postgres.js';
import { lockForReindex } from '../storage/sql/versions.js';
import type { SearchIndexer, StoredVersion } from '../storage/types.js';
import type { AsyncJobs, ProgressCounts } from './async-job.js';

/** The AsyncJobs kind of the server-wide reindex. */
export const SERVER_REINDEX = 'server-reindex';

export interface ServerReindexDeps {
  pool: Pool;
  /** Rewrites every index row of the versions given (search's `reindexer`, with terminology's tables). */
  indexer: SearchIndexer;
  /** Resources per transaction (default 500). */
  batchSize?: number;
}

export interface ServerReindexParams {
  /** The types to reindex; all stored types holding resources when absent. */
  types?: string[];
}

export interface ReindexReport {
  /** Resources reindexed per type, in the order they were done. */
  types: { resourceType: string; count: number }[];
  total: number;
  /** True when the job was cancelled before the end (the counts say how far it got). */
  cancelled: boolean;
}

export interface ReindexCallbacks {
  /** Told after each batch. */
  progress?(counts: ProgressCounts, resourceType: string): Promise<void>;
  /** Asked after each batch; true stops the reindex there. */
  cancelled?(): Promise<boolean>;
}

const BATCH = 500;
const NO_PROJECT = '00000000-0000-0000-0000-000000000000';

/** The current resources of each type to reindex (types without any are left out). */
async function countsOf(pool: Pool, types?: string[]): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ resource_type: string; count: number }>(
    `SELECT resource_type, count(*)::int AS count FROM resource
     WHERE NOT deleted AND ($1::text[] IS NULL OR resource_type = ANY($1::text[]))
     GROUP BY resource_type ORDER BY resource_type`,
    [types ?? null],
  );
  return new Map(rows.map((r) => [r.resource_type, r.count]));
}

/**
 * Reindexes, type by type, a batch (500) per transaction in (project, id) order. Each batch is
 * read locked (lockForReindex), so an update committing meanwhile is never overwritten by index
 * rows of the content it replaced, and no transaction holds a large type's locks for long.
 */
export async function reindexServer(
  deps: ServerReindexDeps,
  params: ServerReindexParams,
  callbacks: ReindexCallbacks = {},
): Promise<ReindexReport> {
  const counts = await countsOf(deps.pool, params.types);
  let total = [...counts.values()].reduce((a, b) => a + b, 0);
  let done = 0;
  const report: ReindexReport = { types: [], total: 0, cancelled: false };
  for (const resourceType of counts.keys()) {
    const entry = { resourceType, count: 0 };
    report.types.push(entry);
    let after = { projectId: NO_PROJECT, id: '' };
    for (;;) {
      const batch = await withTransaction(deps.pool, async (client) => {
        const rows = await lockForReindex(client, resourceType, after, deps.batchSize ?? BATCH);
        const versions: StoredVersion[] = rows.map((r) => ({
          resourceType,
          id: r.id,
          projectId: r.projectId,
          versionId: r.versionId,
          lastUpdated: r.lastUpdated,
          deleted: false,
          resource: JSON.parse(r.content),
          content: r.content,
          // The index writer reads the resource; the stored compartments stay as they are.
          compartments: [],
        }));
        if (versions.length > 0) await deps.indexer.index(client, versions);
        return rows;
      });
      if (batch.length === 0) break;
      entry.count += batch.length;
      done += batch.length;
      // Resources created meanwhile are reindexed too: the total grows with them.
      total = Math.max(total, done);
      const last = batch[batch.length - 1];
      after = { projectId: last.projectId, id: last.id };
      await callbacks.progress?.({ done, total }, resourceType);
      if (await callbacks.cancelled?.()) {
        report.cancelled = true;
        report.total = done;
        return report;
      }
    }
  }
  report.total = done;
  return report;
}

/** The job's output: the total, and one `type` part per resource type reindexed. */
export function reindexOutput(report: ReindexReport): Parameters {
  return {
    resourceType: 'Parameters',
    parameter: [
      { name: 'total', valueInteger: report.total },
      ...report.types.map((t) => ({
        name: 'type',
        part: [
          { name: 'resourceType', valueCode: t.resourceType },
          { name: 'count', valueInteger: t.count },
        ],
      })),
    ],
  };
}

/**
 * Registers the reindex as an asynchronous job kind: progress (done / total resources) is kept on
 * the AsyncJob at most once a second, and a cancelled job stops after its current batch.
 */
export function defineServerReindex(asyncJobs: AsyncJobs, deps: ServerReindexDeps, reportEveryMs = 1000): void {
  asyncJobs.define<ServerReindexParams>(SERVER_REINDEX, async (params, job) => {
    let lastReport = 0;
    let stop = false;
    const report = await reindexServer(deps, params, {
      progress: async (counts, resourceType) => {
        if (Date.now() - lastReport < reportEveryMs && counts.done < counts.total) return;
        lastReport = Date.now();
        await job.progress(
          counts.done / counts.total,
          `${counts.done}/${counts.total} resources (${resourceType})`,
          counts,
        );
        // Asked only when progress is recorded: a read of the AsyncJob per second at most.
        stop = await job.cancelled();
      },
      cancelled: async () => stop,
    });
    return report.cancelled ? undefined : reindexOutput(report);
  });
}
