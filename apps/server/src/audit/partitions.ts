// The trail's monthly partitions (audit_event is PARTITION BY RANGE (recorded)): created as the
// writer meets a month, dropped whole by retention.
import type { Pool, Queryable } from '../platform/postgres.js';

/** 'YYYYMM' of a time, in UTC. */
export function monthKey(time: Date): string {
  return `${time.getUTCFullYear()}${String(time.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function partitionName(month: string): string {
  return `audit_event_p${month}`;
}

function monthStart(month: string, plus = 0): Date {
  return new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(4)) - 1 + plus, 1));
}

/**
 * The planner statistics each partition keeps (ANALYZE's per-column target). The trail is appended
 * to at the rate of the API's requests, so the server's analyzer (storage/auto-analyze.ts) analyzes
 * a month's partition again and again as it grows; at the default target (100: a 30,000-row
 * sample, the array columns' element statistics, a sort of every sampled content) one ANALYZE
 * took 500-900 ms of database time, about 80 µs per entry written under a read workload. What the
 * searches need (project, time, the references' elements) is estimated as well from 3,000 rows;
 * the content and the hashes are never searched. Measured: 523 ms → 80 ms for 21,853 entries.
 */
export const PARTITION_STATISTICS: Readonly<Record<string, number>> = {
  project_id: 10,
  seq: 10,
  id: 10,
  recorded: 10,
  action: 10,
  outcome: 10,
  type_code: 10,
  agent: 10,
  entity: 10,
  patient: 10,
  content: 0,
  prev_hash: 0,
  hash: 0,
};

/** ALTER TABLE ... SET STATISTICS for `table` (a partition, or audit_event and with it every partition it has). */
export function statisticsStatement(table: string): string {
  const columns = Object.entries(PARTITION_STATISTICS).map(([c, n]) => `ALTER COLUMN ${c} SET STATISTICS ${n}`);
  return `ALTER TABLE ${table} ${columns.join(', ')}`;
}

/**
 * Creates the partitions of these months that do not exist yet, one process at a time (an
 * advisory lock: two processes creating the same partition would otherwise collide).
 */
export async function ensurePartitions(pool: Pool, months: Iterable<string>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('hearth_audit_partitions'))`);
    for (const month of months) {
      if (!/^\d{6}$/.test(month)) throw new Error(`Bad audit partition month ${month}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${partitionName(month)} PARTITION OF audit_event
           FOR VALUES FROM ('${monthStart(month).toISOString()}') TO ('${monthStart(month, 1).toISOString()}')`,
      );
      // A new partition does not take its parent's statistics targets.
      await client.query(statisticsStatement(partitionName(month)));
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The trail's partitions, with the month each holds. */
export async function listPartitions(db: Queryable): Promise<{ name: string; month: string; end: Date }[]> {
  const result = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = 'audit_event' ORDER BY c.relname`,
  );
  return result.rows
    .map((r) => ({ name: r.name, month: r.name.replace(/^audit_event_p/, '') }))
    .filter((p) => /^\d{6}$/.test(p.month))
    .map((p) => ({ ...p, end: monthStart(p.month, 1) }));
}
