/** What a benchmark workload is, the context it runs in, and what workloads share when seeding. */
import pg from 'pg';
import type { BenchClient } from './http.js';
import type { LoadResult, Operation } from './load.js';

export interface Scenario {
  name: string;
  /** What the rate counts: requests, or resources for bulk workloads. */
  unit: 'req/s' | 'resources/s' | 'notifications/s';
  /** Target from the issues, for the report. */
  target?: string;
  op: Operation;
  concurrency?: number;
  /** Runs once before the scenario is measured. */
  setup?: () => Promise<void>;
  /** Measures one run itself instead of the closed-loop runner (paced workloads). */
  measure?: (seconds: number) => Promise<LoadResult>;
  /** Sees the scenario's result (median of the runs). */
  after?: (result: LoadResult) => void;
  /** CPU time of the server processes the workload uses, in ms, when not only the one the benchmark started. */
  serverCpuMs?: () => number | undefined;
}

export interface BenchContext {
  client: BenchClient;
  concurrency: number;
  scale: number;
  log(message: string): void;
  /** The server's database, when known: workloads refresh planner statistics after seeding. */
  databaseUrl?: string;
  /** CPU used so far by the server process and the database's backends, in ms (undefined where unreadable). */
  cpuMs?: () => Promise<{ server?: number; db?: number }>;
  /** Runs once the benchmark is over, before the server stops (extra server processes stop here). */
  onFinish(cleanup: () => Promise<void>): void;
}

/**
 * ANALYZE after the bulk load, as an operator would (docs/adr/0002-search-index.md): until
 * autovacuum gets to it, the planner plans on the statistics of nearly empty tables.
 */
export async function analyze(ctx: BenchContext): Promise<void> {
  if (!ctx.databaseUrl) {
    ctx.log('no database URL: plans may be off until autovacuum analyzes the seeded tables');
    return;
  }
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    const started = Date.now();
    await db.query('ANALYZE');
    ctx.log(`ANALYZE after seeding: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await db.end();
  }
}
