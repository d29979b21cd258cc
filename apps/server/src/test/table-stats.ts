import type { Pool } from '../platform/postgres.js';

/** A table's planner statistics and PostgreSQL's counts of it (pg_stat_user_tables, pg_class). */
export interface TableStats {
  /** ANALYZE commands run on the table (a server's); autovacuum's are counted apart. */
  analyzed: number;
  autoanalyzed: number;
  /** Rows changed since the last ANALYZE (n_mod_since_analyze). */
  changed: number;
  /** Live rows as PostgreSQL counts them (n_live_tup). */
  live: number;
  /** Rows at the last ANALYZE or VACUUM; -1 for never. */
  reltuples: number;
}

export async function tableStats(db: Pick<Pool, 'query'>, table: string): Promise<TableStats> {
  const { rows } = await db.query<TableStats>(
    `SELECT s.analyze_count AS analyzed, s.autoanalyze_count AS autoanalyzed, s.n_mod_since_analyze AS changed,
            s.n_live_tup AS live, c.reltuples
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = $1`,
    [table],
  );
  return rows[0];
}

/**
 * Polls `read` until `ok` holds; on timeout the error names what was awaited and the last value
 * (PostgreSQL reports a backend's write counts when it is next idle, up to ~10 s late).
 */
export async function waitForValue<T>(
  what: string,
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  ms = 240_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
