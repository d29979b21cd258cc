import type { Queryable } from '../platform/postgres.js';

/**
 * Fixed-window counters in PostgreSQL (hearth_rate_counter), shared by every server process:
 * rate limits and failed sign-in tracking. One statement per hit.
 */
export interface CounterHit {
  count: number;
  /** When the current window ends (ms since epoch). */
  resetAt: number;
}

export async function hitCounter(db: Queryable, key: string, windowMs: number, now = Date.now()): Promise<CounterHit> {
  const start = Math.floor(now / windowMs) * windowMs;
  const result = await db.query<{ count: number }>(
    `INSERT INTO hearth_rate_counter (key, window_start, count) VALUES ($1, to_timestamp($2 / 1000.0), 1)
     ON CONFLICT (key, window_start) DO UPDATE SET count = hearth_rate_counter.count + 1
     RETURNING count`,
    [key, start],
  );
  return { count: result.rows[0].count, resetAt: start + windowMs };
}

export async function readCounter(db: Queryable, key: string, windowMs: number, now = Date.now()): Promise<CounterHit> {
  const start = Math.floor(now / windowMs) * windowMs;
  const result = await db.query<{ count: number }>(
    'SELECT count FROM hearth_rate_counter WHERE key = $1 AND window_start = to_timestamp($2 / 1000.0)',
    [key, start],
  );
  return { count: result.rows[0]?.count ?? 0, resetAt: start + windowMs };
}

export async function clearCounter(db: Queryable, key: string): Promise<void> {
  await db.query('DELETE FROM hearth_rate_counter WHERE key = $1', [key]);
}

/** Drops windows that ended more than an hour ago. */
export async function pruneCounters(db: Queryable): Promise<void> {
  await db.query("DELETE FROM hearth_rate_counter WHERE window_start < now() - interval '1 hour'");
}
