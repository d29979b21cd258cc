import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { createPool, type Pool } from '../platform/postgres.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { makePatientTransaction, prng } from '../../../../tools/bench/data.js';
import { AutoAnalyzer, BASE_THRESHOLD } from './auto-analyze.js';

const logger = createLogger('silent');

interface TableStats {
  /** ANALYZE commands run on the table (the server's); autovacuum's are counted apart. */
  analyzed: number;
  autoanalyzed: number;
  changed: number;
  live: number;
  reltuples: number;
}

async function statsOf(db: Pick<Pool, 'query'>, table: string): Promise<TableStats> {
  const { rows } = await db.query<TableStats>(
    `SELECT s.analyze_count AS analyzed, s.autoanalyze_count AS autoanalyzed, s.n_mod_since_analyze AS changed,
            s.n_live_tup AS live, c.reltuples
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = $1`,
    [table],
  );
  return rows[0];
}

/** Polls until `ok` holds (a check runs every few seconds, and PostgreSQL reports write counts when idle). */
async function waitFor<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, ms = 240_000): Promise<T> {
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

describe('a server on never-analyzed tables', () => {
  let t: TestApp;
  const GROWN = ['Observation', 'search_token', 'search_reference'];

  beforeAll(async () => {
    // A fresh clone of the template: its tables have never been analyzed. Autovacuum stays away from
    // them whatever the test server's settings, as it would on a server with autovacuum off.
    t = await createTestApp();
    for (const table of GROWN) {
      await t.pool.query(`ALTER TABLE "${table}" SET (autovacuum_enabled = false)`);
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it(
    'analyzes the tables a load of transactions grew, so subject+code probes the subject rows instead of merging every row of the code',
    { timeout: 600_000 },
    async () => {
      // Observation has never been analyzed; the index tables hold the template's terminology rows,
      // which the server may have analyzed since it started: they must be analyzed again after the load.
      const observation = await statsOf(t.pool, 'Observation');
      expect(observation.analyzed + observation.autoanalyzed).toBe(0);
      expect(observation.reltuples).toBe(-1);
      const before = new Map<string, number>();
      for (const table of GROWN) {
        before.set(table, (await statsOf(t.pool, table)).analyzed);
      }
      // The benchmark's data (tools/bench/data.ts), 200 patients with 25 observations each, through
      // transaction Bundles: 500 Observations share each code, a patient has 25.
      let patientId = '';
      for (let i = 0; i < 200; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/fhir/R4/',
          headers: { ...t.authHeaders, 'content-type': 'application/fhir+json', prefer: 'return=minimal' },
          payload: makePatientTransaction(prng(1000 + i), i, 31, 25),
        });
        expect(res.statusCode, res.body).toBe(200);
        if (i === 7) {
          patientId = (res.json() as { entry: { response: { location: string } }[] }).entry[0].response.location.split(
            '/',
          )[1];
        }
      }
      // The server's own check, against PostgreSQL's counters: nobody else runs ANALYZE here.
      for (const table of GROWN) {
        await waitFor(
          `the server to analyze ${table}`,
          () => statsOf(t.pool, table),
          (s) =>
            s.analyzed > before.get(table)! &&
            s.reltuples > 0 &&
            Math.abs(s.live - s.reltuples) <= BASE_THRESHOLD + 0.1 * s.reltuples,
        );
      }
      const plan = await planOf(
        t,
        `Observation?subject=Patient/${patientId}&code=${encodeURIComponent('http://loinc.org|8867-4')}`,
      );
      // Without statistics the code's rows were read whole through search_token_value_idx and
      // merged with the subject's (Merge Semi Join); with them, each of the subject's rows is probed.
      expect(plan, plan).toContain('search_reference_target_idx');
      expect(plan, plan).toMatch(/Index (Only )?Scan using search_token_resource_idx/);
      expect(plan, plan).not.toContain('search_token_value_idx');
      expect(plan, plan).not.toContain('Merge');
    },
  );
});

/** EXPLAIN of the statement that reads a search's matches (the pool's queries are captured during the request). */
async function planOf(t: TestApp, url: string): Promise<string> {
  const captured: { text: string; values: unknown[] }[] = [];
  const pool = t.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const original = pool.query.bind(pool);
  pool.query = (text: unknown, values?: unknown) => {
    const q = typeof text === 'object' && text ? (text as { text: string; values: unknown[] }) : { text, values };
    if (typeof q.text === 'string' && /FROM "Observation" r/.test(q.text)) {
      captured.push({ text: q.text, values: q.values as unknown[] });
    }
    return original(text, values);
  };
  try {
    const res = await t.app.inject({ url: `/fhir/R4/${url}`, headers: t.authHeaders });
    expect(res.statusCode, res.body).toBe(200);
  } finally {
    pool.query = original;
  }
  expect(captured).toHaveLength(1);
  const result = (await original(`EXPLAIN ${captured[0].text}`, captured[0].values)) as {
    rows: { 'QUERY PLAN': string }[];
  };
  return result.rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('AutoAnalyzer, several processes on one database', () => {
  let db: TestDatabase;
  let admin: pg.Client;
  const pools: Pool[] = [];
  let analyzers: AutoAnalyzer[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query('CREATE TABLE analyze_probe (n integer, note text) WITH (autovacuum_enabled = false)');
    // Three "processes": a pool each, as three servers would have.
    for (let i = 0; i < 3; i++) {
      pools.push(createPool({ connectionString: db.url, max: 2, statementTimeoutMs: 30_000 }));
    }
    analyzers = pools.map((pool) => new AutoAnalyzer({ pool, logger, growth: 0.1 }));
  });
  afterAll(async () => {
    await Promise.all(analyzers.map((a) => a.stop()));
    await Promise.all(pools.map((p) => p.end()));
    await admin?.end();
    await db?.drop();
  });

  /** Inserts rows and waits until PostgreSQL's counters show them (as a server's check would see them). */
  async function insert(rows: number): Promise<void> {
    const before = await statsOf(admin, 'analyze_probe');
    await admin.query(`INSERT INTO analyze_probe SELECT g, 'row ' || g FROM generate_series(1, $1) g`, [rows]);
    // Reported when this connection is next idle, rather than up to 10 s later.
    await admin.query('SELECT pg_stat_force_next_flush()');
    await waitFor(
      'the insert to be counted',
      () => statsOf(admin, 'analyze_probe'),
      (s) => s.changed >= before.changed + rows,
      30_000,
    );
  }

  /** How many of the three processes' simultaneous checks analyzed the probe table. */
  const analyzedProbe = async () =>
    (await Promise.all(analyzers.map((a) => a.check()))).flat().filter((t) => t === 'analyze_probe').length;

  it('analyzes a grown table once per growth step, whichever process checks', { timeout: 120_000 }, async () => {
    await insert(10_000);
    // Three processes check at the same moment: one ANALYZE.
    expect(await analyzedProbe()).toBe(1);
    expect((await statsOf(admin, 'analyze_probe')).analyzed).toBe(1);
    expect((await statsOf(admin, 'analyze_probe')).reltuples).toBe(10_000);
    // Nothing changed since: nobody analyzes it again.
    expect(await analyzedProbe()).toBe(0);
    // 5% more rows: below the step.
    await insert(500);
    expect(await analyzedProbe()).toBe(0);
    // Past a tenth (plus the base threshold) since the last ANALYZE: the next step.
    await insert(1_000);
    expect(await analyzedProbe()).toBe(1);
    expect((await statsOf(admin, 'analyze_probe')).analyzed).toBe(2);
    // Every row updated, twice: as many rows as before, no step (a hot table is not analyzed at every check).
    for (let i = 0; i < 2; i++) {
      const changed = (await statsOf(admin, 'analyze_probe')).changed;
      await admin.query(`UPDATE analyze_probe SET note = 'updated ' || n`);
      await admin.query('SELECT pg_stat_force_next_flush()');
      await waitFor(
        'the update to be counted',
        () => statsOf(admin, 'analyze_probe'),
        (s) => s.changed > changed,
        30_000,
      );
    }
    expect(await analyzedProbe()).toBe(0);
    expect((await statsOf(admin, 'analyze_probe')).analyzed).toBe(2);
  });

  it(
    'skips a table another process is analyzing, or that is locked, without waiting',
    { timeout: 120_000 },
    async () => {
      await insert(5_000);
      const other = new pg.Client({ connectionString: db.url });
      await other.connect();
      try {
        // Another process holds the table's analyze lock.
        await other.query('BEGIN');
        await other.query(`SELECT pg_advisory_xact_lock(hashtextextended('hearth-analyze:' || 'analyze_probe', 0))`);
        expect(await analyzedProbe()).toBe(0);
        await other.query('ROLLBACK');
        // A VACUUM, an autovacuum worker or DDL holds ANALYZE's own lock: left to them, and no wait.
        await other.query('BEGIN');
        await other.query('LOCK TABLE analyze_probe IN SHARE UPDATE EXCLUSIVE MODE');
        const started = Date.now();
        expect(await analyzedProbe()).toBe(0);
        expect(Date.now() - started).toBeLessThan(10_000);
        // Writes go on meanwhile: ANALYZE's lock does not conflict with them.
        await admin.query('INSERT INTO analyze_probe VALUES (0, $1)', ['during']);
        await other.query('ROLLBACK');
        // Free again: analyzed.
        expect(await analyzedProbe()).toBe(1);
      } finally {
        await other.end();
      }
    },
  );
});
