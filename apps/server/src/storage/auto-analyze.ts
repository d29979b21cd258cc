import pg from 'pg';
import type { Logger } from '../platform/logger.js';
import { guardConnectionErrors, pgErrorCode, type Pool } from '../platform/postgres.js';

/** LOCK ... NOWAIT on a table locked in a conflicting mode. */
export const PG_LOCK_NOT_AVAILABLE = '55P03';

/** How the statistics refresher connects, and when it analyzes a table. */
export interface AutoAnalyzerOptions {
  /** The server's pool: the analyzer connects as it does, through one connection of its own. */
  pool: Pool;
  logger: Logger;
  /** Share of a table's rows (at its last ANALYZE) by which it must have grown or shrunk since: 0.1 for a tenth. */
  growth: number;
  /** Pause between checks, in ms. */
  intervalMs?: number;
}

/** Rows a table must grow or shrink by, beyond the share, before it is analyzed again (autovacuum_analyze_threshold's default). */
export const BASE_THRESHOLD = 50;
const DEFAULT_INTERVAL_MS = 5000;

/** The advisory lock of one table's ANALYZE, shared by every process on the database (and by analyze-hold.ts). */
export const LOCK_KEY = `hashtextextended('hearth-analyze:' || $1::text, 0)`;

/**
 * A table (pg_class `c`) whose live rows grew or shrank past the threshold since its last ANALYZE
 * ($1 rows plus $2 of the rows it had then): counted by PostgreSQL, with every process's writes.
 * Updates in place (a hot counter table) move no step: their ANALYZE would run at every check and
 * churn the catalog forever; they are autovacuum's. Also a table that holds rows but was never
 * analyzed nor vacuumed (reltuples -1): PostgreSQL forgets its counts after a crash, and
 * pg_restore loads without analyzing.
 */
export const STALE = `(abs(pg_stat_get_live_tuples(c.oid) - greatest(c.reltuples, 0)) > $1 + $2 * greatest(c.reltuples, 0)
   OR (c.reltuples < 0 AND pg_relation_size(c.oid) > 0))`;

/**
 * Tables of the current schema that need an ANALYZE, most grown first. The counters are read by
 * function on pg_class rows (not the pg_stat_user_tables view) to keep the check cheap.
 */
const STALE_TABLES = `
  SELECT c.oid::regclass::text AS name, pg_stat_get_live_tuples(c.oid) AS rows, c.reltuples AS analyzed_rows
    FROM pg_class c
   WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND ${STALE}
   ORDER BY abs(pg_stat_get_live_tuples(c.oid) - greatest(c.reltuples, 0)) DESC`;

const STILL_STALE = `SELECT ${STALE} AS stale FROM pg_class c WHERE c.oid = $3::regclass`;

/**
 * Refreshes the planner statistics of the tables that grew (or shrank) by more than a share since
 * their last ANALYZE, so that search plans never depend on whether autovacuum has got to them yet.
 *
 * Without statistics PostgreSQL takes every equality on an index table to match a handful of
 * rows, and plans a selective search as if every condition were: `Observation?subject=…&code=…`
 * sorted and merged all 5,000 Observations of the code instead of probing the subject's 25
 * (29 ms instead of under 1), a `_has` read every match of its code for each Patient (> 30 s).
 * Autovacuum may be off, or minutes behind a large import; the server knows better than to wait.
 *
 * How much a table grew is read from PostgreSQL's own counters (`n_live_tup` against the
 * `reltuples` of its last ANALYZE), which count the writes of every process on the database, are
 * kept with autovacuum off, and depend on none of this process's state; the decision is made again
 * under a per-table advisory lock, so several processes never analyze one table at once or twice
 * per step. A table is analyzed once it grew or shrank by more than `growth` of its rows (plus 50,
 * as autovacuum's base threshold, so tiny tables are not analyzed at every write), and once if it
 * holds rows but has never been analyzed. Steady updates that keep the row count are left to
 * autovacuum (the index tables have their own, faster settings: migration 103). ANALYZE samples a
 * bounded number of rows (300 × default_statistics_target) whatever the table's size, takes a lock
 * that no write waits for, and skips a table someone else is vacuuming, analyzing or altering.
 * Checks run on a timer, off every request; writes commit first and are counted by PostgreSQL
 * within a few seconds (backends report their counts when idle, at most ~10 s late), so the tables
 * a transaction, an import or a reindex grew are analyzed within about a check interval of their
 * counts arriving.
 */
export class AutoAnalyzer {
  /** One connection of its own: never one a request waits for, and never more than one ANALYZE at a time. */
  private readonly db: Pool;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | undefined;
  private stopped = false;
  private failing = false;

  constructor(private readonly options: AutoAnalyzerOptions) {
    this.db = new pg.Pool({ ...options.pool.options, max: 1, allowExitOnIdle: true });
    // It holds its connection through a series of ANALYZEs: a restart must not crash the process.
    guardConnectionErrors(this.db);
  }

  /** Checks every interval until stop(). */
  start(): void {
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) {
      return;
    }
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
    // Never what keeps the process alive.
    this.timer.unref();
  }

  /**
   * One check: analyzes each table past the threshold that no other process is analyzing.
   * Returns the tables this call analyzed. Never throws (a database that is away is tried again
   * at the next check).
   */
  check(): Promise<string[]> {
    this.running ??= this.analyzeStale().finally(() => (this.running = undefined));
    return this.running;
  }

  private async analyzeStale(): Promise<string[]> {
    const { logger, growth } = this.options;
    const analyzed: string[] = [];
    try {
      const stale = await this.db.query<{ name: string; rows: number; analyzed_rows: number }>(STALE_TABLES, [
        BASE_THRESHOLD,
        growth,
      ]);
      for (const { name, rows, analyzed_rows: before } of stale.rows) {
        if (this.stopped) {
          break;
        }
        const started = Date.now();
        if (await this.analyzeTable(name)) {
          analyzed.push(name);
          logger.debug({ table: name, rows, before, ms: Date.now() - started }, 'auto-analyze: statistics refreshed');
        }
      }
      this.failing = false;
    } catch (err) {
      // Logged once per outage, not at every check.
      if (!this.failing) {
        logger.warn({ err }, 'auto-analyze: could not check or refresh table statistics');
      }
      this.failing = true;
    }
    return analyzed;
  }

  /** ANALYZEs one table under its advisory lock, if it still needs it; false when skipped. */
  private async analyzeTable(name: string): Promise<boolean> {
    const { growth } = this.options;
    const client = await this.db.connect();
    try {
      await client.query('BEGIN');
      const locked = await client.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_xact_lock(${LOCK_KEY}) AS locked`,
        [name],
      );
      // Another process is analyzing it: its ANALYZE serves this one too.
      if (!locked.rows[0]?.locked) {
        await client.query('ROLLBACK');
        return false;
      }
      // A process that held the lock until just now may have analyzed it already.
      const check = await client.query<{ stale: boolean }>(STILL_STALE, [BASE_THRESHOLD, growth, name]);
      if (!check.rows[0]?.stale) {
        await client.query('ROLLBACK');
        return false;
      }
      // ANALYZE's own lock, taken first without waiting: no write ever waits for it, and a table
      // that autovacuum, a VACUUM or DDL holds is left to them. (The name comes from the catalog,
      // regclass text, quoted where needed.)
      await client.query(`LOCK TABLE ${name} IN SHARE UPDATE EXCLUSIVE MODE NOWAIT`);
      await client.query(`ANALYZE ${name}`);
      await client.query('COMMIT');
      return true;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (pgErrorCode(err) === PG_LOCK_NOT_AVAILABLE) {
        return false;
      }
      throw err;
    } finally {
      client.release();
    }
  }

  /** Stops checking; waits for a check in progress (its current ANALYZE) to end, and closes its connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (!this.db.ended) {
      await this.db.end();
    }
  }
}
