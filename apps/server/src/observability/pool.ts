import { context, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import type pg from 'pg';
import { failSpan, type Telemetry } from './telemetry.js';

/** Statement text kept on a span, at most (Hearth's statements are parameterised: no values in them). */
const MAX_STATEMENT_CHARS = 4000;

type Callback = (err: Error | null, ...rest: unknown[]) => void;

/**
 * Measures one connection pool: its size at each scrape, the wait for a connection (metrics), and
 * a span per statement (traces). Spans are made only under a span already current (a request, a
 * job, a bot run): the queue's polling and other background statements make none. Each physical
 * connection's `query` is wrapped once, when the pool opens it, so statements on a client held
 * for a transaction are seen too. Without telemetry nothing is wrapped.
 */
export function instrumentPool(pool: pg.Pool, name: string, telemetry: Telemetry): void {
  const { metrics, tracer } = telemetry;
  if (metrics) {
    metrics.sources.pools.set(name, pool);
    timeAcquire(pool, metrics.dbPoolAcquireWait.labels(name));
  }
  if (tracer) {
    const database = databaseName(pool);
    pool.on('connect', (client) => traceQueries(client, tracer, database));
  }
}

/** Wraps pool.connect (pool.query goes through it too) to observe how long each caller waited. */
function timeAcquire(pool: pg.Pool, wait: { observe(seconds: number): void }): void {
  const connect = pool.connect.bind(pool) as (cb?: Callback) => Promise<pg.PoolClient> | undefined;
  const timed = (cb?: Callback): Promise<pg.PoolClient> | undefined => {
    const start = performance.now();
    if (cb) {
      return connect((err, ...rest) => {
        wait.observe((performance.now() - start) / 1000);
        cb(err, ...rest);
      });
    }
    return connect()!.finally(() => wait.observe((performance.now() - start) / 1000));
  };
  pool.connect = timed as typeof pool.connect;
}

function traceQueries(client: pg.PoolClient, tracer: Tracer, database: string | undefined): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = function tracedQuery(...args: unknown[]): unknown {
    const parent = context.active();
    if (!trace.getSpan(parent)) {
      return query(...args);
    }
    const first = args[0] as string | { text?: string; name?: string; submit?: unknown } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    const operation = operationOf(text);
    const span = tracer.startSpan(
      operation,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'postgresql',
          'db.system': 'postgresql',
          'db.operation.name': operation,
          'db.query.text': text.length > MAX_STATEMENT_CHARS ? `${text.slice(0, MAX_STATEMENT_CHARS)}…` : text,
          ...(database ? { 'db.namespace': database } : {}),
          ...(typeof first === 'object' && first?.name ? { 'db.postgresql.statement_name': first.name } : {}),
        },
      },
      parent,
    );
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: Error | null, ...rest: unknown[]) => {
        endSpan(span, err);
        (callback as Callback)(err, ...rest);
      };
      return query(...args);
    }
    const result = query(...args) as { then?: unknown; once?: unknown } | undefined;
    if (result && typeof result.then === 'function') {
      (result as Promise<unknown>).then(
        () => endSpan(span, null),
        (err: Error) => endSpan(span, err),
      );
    } else if (result && typeof result.once === 'function') {
      // A submittable (a cursor, a stream) ends with 'end' or 'error'.
      const emitter = result as { once(event: string, fn: (err?: Error) => void): void };
      emitter.once('end', () => endSpan(span, null));
      emitter.once('error', (err) => endSpan(span, err ?? null));
    } else {
      endSpan(span, null);
    }
    return result;
  } as typeof client.query;
}

function endSpan(span: Span, err: Error | null | undefined): void {
  if (err) {
    failSpan(span, err);
  }
  span.end();
}

/** The statement's first keyword, upper case (SELECT, INSERT, WITH, BEGIN...): the span's name. */
export function operationOf(text: string): string {
  const match = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)/.exec(text);
  return match ? match[1].toUpperCase() : 'QUERY';
}

function databaseName(pool: pg.Pool): string | undefined {
  const options = pool.options as { database?: string; connectionString?: string };
  if (options.database) {
    return options.database;
  }
  if (!options.connectionString) {
    return undefined;
  }
  try {
    const path = new URL(options.connectionString).pathname.slice(1);
    return path ? decodeURIComponent(path) : undefined;
  } catch {
    return undefined;
  }
}
