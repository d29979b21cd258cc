import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { createPool, withTransaction, type Pool } from '../platform/postgres.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { HearthMetrics } from './metrics.js';
import { instrumentPool, operationOf } from './pool.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
});
afterAll(async () => {
  await db?.drop();
});

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('instrumentPool', () => {
  it('reports callers waiting for a connection, and how long they waited', async () => {
    const pool = createPool({ connectionString: db.url, max: 1, statementTimeoutMs: 5000 });
    const metrics = new HearthMetrics();
    instrumentPool(pool, 'main', { metrics });
    try {
      const held = await pool.connect();
      const waiting = pool.query('SELECT 1');
      await new Promise((resolve) => setTimeout(resolve, 100));
      let text = (await metrics.exposition()).body;
      expect(sample(text, 'hearth_db_pool_waiting{pool="main"}')).toBe(1);
      expect(sample(text, 'hearth_db_pool_connections{pool="main",state="total"}')).toBe(1);
      expect(sample(text, 'hearth_db_pool_connections{pool="main",state="max"}')).toBe(1);
      held.release();
      await waiting;
      text = (await metrics.exposition()).body;
      expect(sample(text, 'hearth_db_pool_waiting{pool="main"}')).toBe(0);
      expect(sample(text, 'hearth_db_pool_acquire_seconds_count{pool="main"}')).toBe(2);
      // The second caller waited for the first to release its connection.
      expect(sample(text, 'hearth_db_pool_acquire_seconds_sum{pool="main"}')).toBeGreaterThanOrEqual(0.09);
    } finally {
      await pool.end();
    }
  });

  describe('SQL spans', () => {
    const spans = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    // The context manager: a span made current in one callback is seen by the statements below it.
    provider.register();
    const tracer = provider.getTracer('test');
    let pool: Pool;
    beforeAll(() => {
      pool = createPool({ connectionString: db.url, max: 2, statementTimeoutMs: 5000 });
      instrumentPool(pool, 'main', { tracer });
    });
    afterAll(async () => {
      await pool.end();
      await provider.shutdown();
    });

    it('makes a client span per statement under the current span, pool and transaction statements alike', async () => {
      spans.reset();
      await tracer.startActiveSpan('parent', async (parent) => {
        await pool.query('SELECT $1::int AS n', [1]);
        await withTransaction(pool, (client) => client.query({ name: 'named_q', text: 'SELECT 2' }));
        await pool.query('SELECT nonsense FROM nowhere').catch(() => undefined);
        parent.end();
      });
      const finished = spans.getFinishedSpans();
      const parent = finished.find((s) => s.name === 'parent')!;
      const sql = finished.filter((s) => s.name !== 'parent');
      expect(sql.map((s) => s.name)).toEqual(['SELECT', 'BEGIN', 'SELECT', 'COMMIT', 'SELECT']);
      for (const span of sql) {
        expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
        expect(span.attributes['db.system.name']).toBe('postgresql');
        expect(span.attributes['db.namespace']).toBe(new URL(db.url).pathname.slice(1));
      }
      expect(sql[0].attributes['db.query.text']).toBe('SELECT $1::int AS n');
      expect(sql[2].attributes['db.postgresql.statement_name']).toBe('named_q');
      // The failed statement's span is an error, with PostgreSQL's message.
      expect(sql[4].status.code).toBe(2);
      expect(sql[4].status.message).toContain('nowhere');
    });

    it('makes no span for statements outside any span (background work)', async () => {
      spans.reset();
      await context.with(trace.deleteSpan(context.active()), () => pool.query('SELECT 1'));
      expect(spans.getFinishedSpans()).toEqual([]);
    });
  });
});

describe('operationOf', () => {
  it('names a statement by its first keyword, past comments', () => {
    expect(operationOf('select 1')).toBe('SELECT');
    expect(operationOf('  WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x')).toBe('WITH');
    expect(operationOf('-- why\n/* and how */ UPDATE t SET a = $1')).toBe('UPDATE');
    expect(operationOf('')).toBe('QUERY');
  });
});
