import { createHash } from 'node:crypto';
import pg from 'pg';

/** Numbers beyond 2^53 are rare in our schema; bigint counts come back as numbers. */
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

export interface PoolOptions {
  connectionString: string;
  max: number;
  statementTimeoutMs: number;
  /**
   * Longest a caller waits for a connection (a free one, or a new one opened); then the query
   * fails with a connection error (isConnectionError) instead of waiting for ever. 0: no limit.
   */
  acquireTimeoutMs?: number;
  applicationName?: string;
}

export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max,
    statement_timeout: options.statementTimeoutMs,
    application_name: options.applicationName ?? 'hearth',
    idleTimeoutMillis: 30000,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? 0,
    // No parallel query: requests are short and many run at once, so a worker only takes a core
    // from another request; and with small LIMITs the planner's parallel plans were its worst
    // (a sorted search page: a parallel hash join and sort of every match, ~50x the ordered
    // index scan it chose without workers).
    options: '-c max_parallel_workers_per_gather=0',
  });
  guardConnectionErrors(pool);
  return pool;
}

/**
 * A connection that drops must never crash the process. Idle in the pool, its error reaches the
 * pool's 'error' event, and the pool replaces it. Checked out (a transaction between two
 * statements, a LISTEN), node-postgres emits the error on the client, where pg-pool listens no
 * longer: without a listener of ours that is an uncaught 'error' event and the process exits
 * (PostgreSQL stopping with transactions open did that). The holder learns of it from its next
 * statement, which fails; the pool discards a connection released in that state.
 */
export function guardConnectionErrors(pool: pg.Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
}

/**
 * A second, smaller pool to the same database whose connections plan every prepared statement
 * once, generically (plan_cache_mode=force_generic_plan). Only for code whose statements are few
 * fixed texts that seek by key, where PostgreSQL's default (re-planning each run while a custom
 * plan looks cheaper) costs more than running them: the job queue's.
 */
export function genericPlanPool(pool: pg.Pool, max: number): pg.Pool {
  const base = pool.options;
  const derived = new pg.Pool({
    ...base,
    max,
    options: `${base.options ?? ''} -c plan_cache_mode=force_generic_plan`.trim(),
    // Its owner may still read through it after stopping (a job's state); idle, it never holds the process open.
    allowExitOnIdle: true,
  });
  guardConnectionErrors(derived);
  return derived;
}

/** Runs fn inside BEGIN/COMMIT; any throw rolls back. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** PostgreSQL error codes we turn into user-facing outcomes. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_SERIALIZATION_FAILURE = '40001';
export const PG_DEADLOCK = '40P01';
export const PG_QUERY_CANCELED = '57014';

export function pgErrorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/**
 * SQLSTATEs of a server that is going away or not there yet: admin_shutdown (57P01),
 * crash_shutdown (57P02), cannot_connect_now (57P03: starting up, shutting down), database_dropped
 * (57P04), too_many_connections (53300).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57P04', '53300']);
/** Socket errors of a connection that could not be opened or was cut. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOENT',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** node-postgres and its pool raise these without a code. */
const CLIENT_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

/**
 * Whether an error means PostgreSQL could not be reached or the connection was lost (the database
 * restarting, an exhausted pool past its acquire timeout), not that the statement was wrong: the
 * same request may succeed later. Class 08 is SQLSTATE's connection exception.
 */
export function isConnectionError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) {
    return false;
  }
  const code = pgErrorCode(err);
  if (code && (UNAVAILABLE_STATES.has(code) || code.startsWith('08') || SOCKET_ERRORS.has(code))) {
    return true;
  }
  const message = err instanceof Error ? err.message : '';
  if (CLIENT_MESSAGES.some((m) => message.startsWith(m))) {
    return true;
  }
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isConnectionError(cause);
}

/**
 * For code that turns a failed lookup into an answer ("no match", "invalid token"): a lost
 * connection is no answer, so it is thrown on (and becomes a 503, or a retried job) instead.
 */
export function throwIfConnectionError(err: unknown): void {
  if (isConnectionError(err)) {
    throw err;
  }
}

/**
 * Runs `statement` until it succeeds, again after each connection error (isConnectionError) with a
 * doubling backoff of up to 2 s: for writes that must not be dropped because PostgreSQL restarted
 * (what a job or a delivery recorded). Other errors are thrown at once; connection errors too once
 * `giveUp()` says so.
 */
export async function retryWhileUnreachable<T>(statement: () => Promise<T>, giveUp: () => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await statement();
    } catch (err) {
      if (!isConnectionError(err) || giveUp()) {
        throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
    }
  }
}

const preparedNames = new Map<string, string>();
const MAX_PREPARED_TEXTS = 2000;

/**
 * A prepared-statement name for a statement text that repeats (a shape of access guard, a job
 * queue operation): each connection parses and plans it once. Past a bound
 * (many distinct policies) new texts run unnamed rather than grow every connection's cache.
 */
export function preparedName(prefix: string, text: string): string | undefined {
  let name = preparedNames.get(text);
  if (!name && preparedNames.size < MAX_PREPARED_TEXTS) {
    name = `${prefix}_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    preparedNames.set(text, name);
  }
  return name;
}
