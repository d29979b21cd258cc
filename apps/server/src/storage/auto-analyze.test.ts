import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { createPool, type Pool } from '../platform/postgres.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { tableStats, waitForValue } from '../test/table-stats.js';
import { AutoAnalyzer } from './auto-analyze.js';

const logger = createLogger('silent');

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
    const before = await tableStats(admin, 'analyze_probe');
    await admin.query(`INSERT INTO analyze_probe SELECT g, 'row ' || g FROM generate_series(1, $1) g`, [rows]);
    // Reported when this connection is next idle, rather than up to 10 s later.
    await admin.query('SELECT pg_stat_force_next_flush()');
    await waitForValue(
      'the insert to be counted',
      () => tableStats(admin, 'analyze_probe'),
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
    expect((await tableStats(admin, 'analyze_probe')).analyzed).toBe(1);
    expect((await tableStats(admin, 'analyze_probe')).reltuples).toBe(10_000);
    // Nothing changed since: nobody analyzes it again.
    expect(await analyzedProbe()).toBe(0);
    // 5% more rows: below the step.
    await insert(500);
    expect(await analyzedProbe()).toBe(0);
    // Past a tenth (plus the base threshold) since the last ANALYZE: the next step.
    await insert(1_000);
    expect(await analyzedProbe()).toBe(1);
    expect((await tableStats(admin, 'analyze_probe')).analyzed).toBe(2);
    // Every row updated, twice: as many rows as before, no step (a hot table is not analyzed at every check).
    for (let i = 0; i < 2; i++) {
      const changed = (await tableStats(admin, 'analyze_probe')).changed;
      await admin.query(`UPDATE analyze_probe SET note = 'updated ' || n`);
      await admin.query('SELECT pg_stat_force_next_flush()');
      await waitForValue(
        'the update to be counted',
        () => tableStats(admin, 'analyze_probe'),
        (s) => s.changed > changed,
        30_000,
      );
    }
    expect(await analyzedProbe()).toBe(0);
    expect((await tableStats(admin, 'analyze_probe')).analyzed).toBe(2);
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

  it('survives its connection being terminated while it holds it between two ANALYZEs', async () => {
    // The analyzer keeps one connection of its own checked out through a series of ANALYZEs; a
    // PostgreSQL restart then reaches the client outside any statement. Unguarded, that is an
    // uncaught 'error' event and the server exits (CI saw it in the restart test).
    const own = (analyzers[0] as unknown as { db: pg.Pool }).db;
    const held = await own.connect();
    const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(held.query('SELECT 1')).rejects.toThrow();
    held.release(true);
    // And the next check runs on a new connection.
    await expect(analyzers[0].check()).resolves.toBeInstanceOf(Array);
  });
});
