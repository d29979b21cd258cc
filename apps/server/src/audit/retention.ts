// Retention: entries older than the server's retention go a month at a time (DROP of a whole
// partition); a project's own, shorter retention deletes the oldest part of its chain. Runs as a
// job of the queue, once an hour, one process at a time.
import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import { listPartitions } from './partitions.js';
import { retentionDays, type ProjectLike } from './settings.js';

const DAY_MS = 86_400_000;
const DELETE_BATCH = 10_000;

export interface PurgeResult {
  droppedPartitions: string[];
  deleted: number;
}

export interface PurgeOptions {
  pool: Pool;
  logger: Logger;
  /** Server-wide retention (HEARTH_AUDIT_RETENTION_DAYS); 0 keeps entries for good. */
  serverDays: number;
  now?: Date;
}

export async function purgeTrail(options: PurgeOptions): Promise<PurgeResult> {
  const { pool } = options;
  const now = options.now ?? new Date();
  const result: PurgeResult = { droppedPartitions: [], deleted: 0 };
  if (options.serverDays > 0) {
    const cutoff = now.getTime() - options.serverDays * DAY_MS;
    for (const partition of await listPartitions(pool)) {
      if (partition.end.getTime() <= cutoff) {
        await dropPartition(pool, partition.name);
        result.droppedPartitions.push(partition.name);
      }
    }
  }
  const projects = await pool.query<{ id: string; content: string }>(
    `SELECT id, content FROM resource WHERE resource_type = 'Project' AND NOT deleted AND content LIKE '%auditRetentionDays%'`,
  );
  for (const row of projects.rows) {
    const days = retentionDays(JSON.parse(row.content) as ProjectLike);
    if (days) {
      result.deleted += await purgeProject(pool, row.id, new Date(now.getTime() - days * DAY_MS));
    }
  }
  if (result.droppedPartitions.length || result.deleted) {
    options.logger.info(result, 'audit trail purged by retention');
  }
  return result;
}

/**
 * Drops a month. Entries are chained in the order they were written, which near the month's end
 * can differ from `recorded` by a moment: entries of the projects' chains up to the dropped
 * month's last one are removed with it, so that what remains of each chain has no holes.
 */
async function dropPartition(pool: Pool, name: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const tails = await client.query<{ project_id: string; seq: string }>(
      `SELECT project_id, max(seq) AS seq FROM ${name} GROUP BY project_id`,
    );
    await client.query(`DROP TABLE ${name}`);
    for (const tail of tails.rows) {
      await client.query('DELETE FROM audit_event WHERE project_id = $1 AND seq <= $2', [tail.project_id, tail.seq]);
      await client.query('UPDATE audit_chain SET purged_through = GREATEST(purged_through, $2) WHERE project_id = $1', [
        tail.project_id,
        tail.seq,
      ]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Deletes the start of a project's chain up to its last entry recorded before `before`: every
 * expired entry goes, with any entry chained before it although recorded a moment later.
 */
async function purgeProject(pool: Pool, projectId: string, before: Date): Promise<number> {
  const bound = await pool.query<{ seq: string | null }>(
    'SELECT max(seq) AS seq FROM audit_event WHERE project_id = $1 AND recorded < $2',
    [projectId, before],
  );
  const lastExpired = Number(bound.rows[0]?.seq ?? 0);
  if (lastExpired < 1) return 0;
  let deleted = 0;
  for (;;) {
    const done = await pool.query(
      // The batch's numbers collected once (writer.ts: CLAIM_OUTBOX says why not `seq IN (SELECT ... LIMIT)`).
      `DELETE FROM audit_event WHERE project_id = $1 AND seq = ANY (ARRAY(
         SELECT seq FROM audit_event WHERE project_id = $1 AND seq <= $2 ORDER BY seq LIMIT ${DELETE_BATCH}))`,
      [projectId, lastExpired],
    );
    deleted += done.rowCount ?? 0;
    if ((done.rowCount ?? 0) < DELETE_BATCH) break;
  }
  await pool.query('UPDATE audit_chain SET purged_through = GREATEST(purged_through, $2) WHERE project_id = $1', [
    projectId,
    lastExpired,
  ]);
  return deleted;
}
