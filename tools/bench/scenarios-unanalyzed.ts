import pg from 'pg';
import type { LoadResult } from './load.js';
import { analyze, type BenchContext, type Scenario } from './scenario.js';
import { searchWorkloads, seedSearchData } from './scenarios-search.js';

/** The database's CPU time per operation of a measured workload (bench.ts passes its figures to `after`). */
function cpuOf(result: LoadResult): number {
  return (result as LoadResult & { dbCpuMsPerOp?: number }).dbCpuMsPerOp ?? NaN;
}

/** The tables the search workloads read. */
const SEARCHED_TABLES = [
  'Patient',
  'Observation',
  'Encounter',
  'Condition',
  'search_token',
  'search_string',
  'search_date',
  'search_reference',
  'search_quantity',
];

async function withDatabase<T>(ctx: BenchContext, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  db.on('error', () => undefined);
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

/** Autovacuum on or off for every table of the database (its per-table setting). */
async function setAutovacuum(db: pg.Client, enabled: boolean): Promise<void> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.oid::regclass::text AS name FROM pg_class c
      WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`,
  );
  for (const { name } of rows) {
    await db.query(
      enabled
        ? `ALTER TABLE ${name} RESET (autovacuum_enabled)`
        : `ALTER TABLE ${name} SET (autovacuum_enabled = false)`,
    );
  }
}

/** Who analyzed the searched tables so far: the server (ANALYZE commands) and autovacuum. */
async function analyzeCounts(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ relname: string; analyzed: number; auto: number; live: number }>(
    `SELECT relname, analyze_count AS analyzed, autoanalyze_count AS auto, n_live_tup AS live
       FROM pg_stat_user_tables WHERE relname = ANY($1::text[]) ORDER BY relname`,
    [SEARCHED_TABLES],
  );
  return rows.map((r) => `${r.relname} ${r.analyzed}/${r.auto} (${r.live} rows)`).join(', ');
}

/**
 * The search workloads on freshly loaded tables that nobody but the server analyzed: autovacuum
 * off for the whole database (as on a server that runs without it, or minutes after a large
 * import, before it gets there), the data loaded through transactions, and no ANALYZE after it.
 * Each workload is measured right after the load, then again after an ANALYZE of everything,
 * and the first figure is compared with the second (issue 12: within 2x). The server's own
 * refresh (HEARTH_AUTO_ANALYZE, on by default) is what keeps them close; run the group with
 * HEARTH_AUTO_ANALYZE=false to see the plans of tables without statistics.
 * Needs tables the benchmark has just created (the embedded database), so `--only unanalyzed`
 * runs it and `all` does not: it would load on top of the search group's analyzed data.
 */
export async function unanalyzedScenarios(ctx: BenchContext): Promise<Scenario[]> {
  if (!ctx.databaseUrl) {
    ctx.log('unanalyzed: needs the database URL (autovacuum is turned off per table): skipped');
    return [];
  }
  await withDatabase(ctx, async (db) => {
    await setAutovacuum(db, false);
    ctx.log(
      `unanalyzed: autovacuum off; ANALYZE commands / autovacuum analyses before the load: ${await analyzeCounts(db)}`,
    );
  });
  const data = await seedSearchData(ctx);
  await withDatabase(ctx, async (db) => {
    ctx.log(`unanalyzed: after the load (no ANALYZE by the benchmark): ${await analyzeCounts(db)}`);
    // The load's pages written out now, not during the first workloads: the comparison is of plans.
    // (A CHECKPOINT touches no statistics.)
    await db.query('CHECKPOINT');
  });
  const fresh = await searchWorkloads(ctx, data);
  const analyzed = await searchWorkloads(ctx, data);
  const freshResults = new Map<string, LoadResult>();
  const scenarios: Scenario[] = [];
  for (const s of fresh) {
    scenarios.push({
      ...s,
      name: `${s.name} [fresh load]`,
      target: 'within 2x of [analyzed]',
      after: (result) => freshResults.set(s.name, result),
    });
  }
  let analyzedOnce = false;
  for (const s of analyzed) {
    scenarios.push({
      ...s,
      name: `${s.name} [analyzed]`,
      target: '',
      // The operator's ANALYZE, once, before the first of these that is measured.
      setup: async () => {
        if (analyzedOnce) {
          return;
        }
        analyzedOnce = true;
        await withDatabase(ctx, async (db) => {
          ctx.log(`unanalyzed: before the ANALYZE: ${await analyzeCounts(db)}`);
          // The fresh-load figures are taken: autovacuum as it was (a DATABASE_URL's database stays as found).
          await setAutovacuum(db, true);
        });
        await analyze(ctx);
      },
      after: (result) => {
        const before = freshResults.get(s.name);
        if (!before) {
          return;
        }
        const p50 = before.p50 / result.p50;
        const rate = result.rate / before.rate;
        // The database's CPU per request: what a plan costs, and the figure the machine's other load moves least.
        const db = cpuOf(before) / cpuOf(result);
        ctx.log(
          `  fresh load vs analyzed: p50 ${p50.toFixed(2)}x (${before.p50.toFixed(1)} / ${result.p50.toFixed(1)} ms), ` +
            `rate ${rate.toFixed(2)}x lower (${before.rate.toFixed(0)} / ${result.rate.toFixed(0)} req/s), ` +
            `db cpu ${db.toFixed(2)}x (${cpuOf(before).toFixed(2)} / ${cpuOf(result).toFixed(2)} ms/op); ` +
            `target <= 2x: ${p50 <= 2 && rate <= 2 ? 'met' : 'MISSED'}`,
        );
      },
    });
  }
  return scenarios;
}
