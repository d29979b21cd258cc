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
