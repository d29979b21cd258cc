import pg from 'pg';
import { pgErrorCode, type Pool } from '../platform/postgres.js';
import { BASE_THRESHOLD, LOCK_KEY, PG_LOCK_NOT_AVAILABLE, STALE } from './auto-analyze.js';

/** While held, a table is analyzed again once it has grown by this share of its rows at its last ANALYZE. */
const HELD_GROWTH = 1;
/** The growth check runs at most this often. */
const CHECK_EVERY_MS = 5000;

/**
 * A bulk write's hold on the statistics of the tables it fills ($import). The AutoAnalyzer of
 * every process refreshes a table each time it grew by a tenth (auto-analyze.ts): for an import
 * that loads a table from nothing, dozens of ANALYZEs of search_token alone (each sampling up to
 * 30,000 rows), a third of the database's work in the measured import. While the hold lasts it
 * owns each table's analyze advisory lock (the lock the analyzers try first, so they skip the
 * table), and refreshes the statistics itself each time a table doubled instead, so searches
 * beside the import are still planned on statistics within a factor of two of the truth. The
 * importer analyzes everything it wrote at the end. Locks are held by a connection of its own
 * and end with it, also if the process dies.
 */
export class AnalyzeHold {
  private lastCheck = Date.now();
  private checking: Promise<void> | undefined;

  private constructor(
    private readonly client: pg.Client,
    /** The tables whose lock this hold got (another process analyzing one at that moment keeps it). */
    readonly tables: string[],
  ) {}

  /** Takes the analyze locks of `tables` (names as ANALYZE takes them: `search_token`, `"Patient"`). */
  static async take(pool: Pool, tables: string[]): Promise<AnalyzeHold> {
    const client = new pg.Client(pool.options);
    // A lost connection surfaces at the next statement (refresh swallows it; the locks end with it).
    client.on('error', () => undefined);
    await client.connect();
    const held: string[] = [];
    try {
      for (const table of tables) {
        const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS locked`, [
          table,
        ]);
        if (rows[0]?.locked) held.push(table);
      }
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return new AnalyzeHold(client, held);
  }

  /**
   * Analyzes the held tables that doubled since their last ANALYZE, at most every few seconds
   * and one check at a time; a check in progress is not waited for. Never throws: statistics
   * are an optimisation, the import goes on without them.
   */
  refresh(): void {
    if (this.checking || Date.now() - this.lastCheck < CHECK_EVERY_MS || this.tables.length === 0) return;
    this.lastCheck = Date.now();
    this.checking = this.analyzeGrown()
      .catch(() => undefined)
      .finally(() => {
        this.checking = undefined;
      });
  }

  private async analyzeGrown(): Promise<void> {
    const { rows } = await this.client.query<{ name: string }>(
      `SELECT c.oid::regclass::text AS name FROM pg_class c WHERE c.oid = ANY($3::regclass[]) AND ${STALE}`,
      [BASE_THRESHOLD, HELD_GROWTH, this.tables],
    );
    for (const { name } of rows) {
      try {
        await this.client.query('BEGIN');
        // As the AutoAnalyzer: never wait for, nor make a write wait for, ANALYZE's lock.
        await this.client.query(`LOCK TABLE ${name} IN SHARE UPDATE EXCLUSIVE MODE NOWAIT`);
        await this.client.query(`ANALYZE ${name}`);
        await this.client.query('COMMIT');
      } catch (err) {
        await this.client.query('ROLLBACK').catch(() => undefined);
        if (pgErrorCode(err) !== PG_LOCK_NOT_AVAILABLE) throw err;
      }
    }
  }

  /** Waits for a check in progress, then lets the analyzers have the tables again. */
  async release(): Promise<void> {
    await this.checking;
    await this.client.end().catch(() => undefined);
  }
}
