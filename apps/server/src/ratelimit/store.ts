import { Redis } from 'ioredis';
import type { Pool } from '../platform/postgres.js';

/**
 * Where request counters live, shared by every server process: PostgreSQL (the default, an
 * unlogged table) or Redis (HEARTH_REDIS_URL). Fixed one-minute windows keyed by their start.
 */
export interface CounterStore {
  /** Adds `delta` to the counter of `key` in the window starting at `windowStart`; returns the new total. */
  add(key: string, windowStart: number, windowMs: number, delta: number): Promise<number>;
  /** Drops counters of windows long past. */
  prune(): Promise<void>;
  close(): Promise<void>;
}

export class PostgresCounterStore implements CounterStore {
  constructor(private readonly pool: Pool) {}

  async add(key: string, windowStart: number, _windowMs: number, delta: number): Promise<number> {
    const result = await this.pool.query<{ count: number }>(
      `INSERT INTO hearth_rate_counter (key, window_start, count) VALUES ($1, to_timestamp($2 / 1000.0), $3)
       ON CONFLICT (key, window_start) DO UPDATE SET count = hearth_rate_counter.count + EXCLUDED.count
       RETURNING count`,
      [key, windowStart, delta],
    );
    return result.rows[0].count;
  }

  async prune(): Promise<void> {
    await this.pool.query(
      "DELETE FROM hearth_rate_counter WHERE window_start < now() - interval '1 hour' AND key NOT LIKE 'jti:%'",
    );
    await this.pool.query("DELETE FROM hearth_rate_counter WHERE key LIKE 'jti:%' AND window_start < now()");
  }

  async close(): Promise<void> {}
}

/** INCRBY and, on the window's first hit, an expiry: atomic in one script. */
const ADD_SCRIPT = `local c = redis.call('INCRBY', KEYS[1], ARGV[1])
if c == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return c`;

export class RedisCounterStore implements CounterStore {
  private readonly redis: Redis;

  constructor(url: string) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    // Errors surface on each command; an idle disconnect must not crash the process.
    this.redis.on('error', () => undefined);
  }

  async add(key: string, windowStart: number, windowMs: number, delta: number): Promise<number> {
    const result = await this.redis.eval(ADD_SCRIPT, 1, `hearth:rl:${key}:${windowStart}`, delta, windowMs * 2);
    return Number(result);
  }

  async prune(): Promise<void> {
    // Keys expire by themselves.
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
