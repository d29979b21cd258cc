/**
 * Hearth's benchmark: `npm run bench [-- --base-url URL] [--seconds N] [--runs N] [--concurrency N]
 * [--only core|search|automation|terminology|processes|all|unanalyzed|audit|harness|wal|app|agent-mllp|validation|import|measures] [--filter name,name] [--scale N] [--copies N]`. Starts a server (embedded
 * PostgreSQL, or DATABASE_URL) unless --base-url is given, measures each workload at the given concurrency, and prints
 * medians of the runs with each figure's ratio to a raw-SQL baseline measured in the same run, and the server's and
 * the database's CPU time per operation. Environment: HEARTH_BENCH_SERVER (server bundle), HEARTH_BENCH_DATA_DIR,
 * HEARTH_BENCH_NODE_ARGS (e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof').
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { BenchClient } from './http.js';
import { runLoad, median, type LoadResult } from './load.js';
import type { BenchContext, Scenario } from './scenario.js';
import { processCpuMs, startServer, type BenchServer } from './server.js';
import { signIn } from './auth.js';
import { coreScenarios } from './scenarios-core.js';
import { searchScenarios } from './scenarios-search.js';
import { automationScenarios } from './scenarios-automation.js';
import { terminologyScenarios } from './scenarios-terminology.js';
import { processesScenarios } from './scenarios-processes.js';
import { unanalyzedScenarios } from './scenarios-unanalyzed.js';
import { auditScenarios } from './scenarios-audit.js';
import { runImportBench } from './import.js';
import { runHarnessComparison } from './harness.js';
import { measureWal } from './wal.js';
import { runAppBench } from './app.js';
import { runAgentMllpBench } from './agent.js';
import { runValidationBench } from './validation.js';
import { runMeasuresBench } from './measures.js';

const { values: args } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    seconds: { type: 'string', default: '5' },
    runs: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    only: { type: 'string', default: 'all' },
    scale: { type: 'string', default: '1' },
    // --only measures: how many times the 100 Synthea patients are loaded (10: 1,000 patients).
    copies: { type: 'string', default: '10' },
    // --only measures: keep the database in HEARTH_BENCH_DATA_DIR and load only the copies it lacks.
    'keep-data': { type: 'boolean', default: false },
    // Comma-separated parts of workload names: only those are measured (e.g. --filter create,update).
    filter: { type: 'string', default: '' },
    email: { type: 'string', default: 'bench-admin@example.com' },
    password: { type: 'string', default: 'bench-Password-1234' },
  },
});

const seconds = Number(args.seconds);
const runs = Number(args.runs);
const concurrency = Number(args.concurrency);
const scale = Number(args.scale);
const filters = (args.filter as string)
  .split(',')
  .map((f) => f.trim().toLowerCase())
  .filter(Boolean);
/** The server the benchmark started, when it started one (its CPU time is read per run). */
let server: BenchServer | undefined;
/** Reads the CPU time of the database's server processes, when PostgreSQL runs on this machine. */
let databaseCpu: DatabaseCpu | undefined;

/**
 * CPU time used so far by the PostgreSQL backends connected to the benchmark's database (from
 * /proc, so only for a local PostgreSQL): the database's share of each operation's cost.
 */
class DatabaseCpu {
  private constructor(private readonly client: pg.Client) {}

  static async open(databaseUrl: string): Promise<DatabaseCpu | undefined> {
    const host = new URL(databaseUrl).hostname;
    if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
      return undefined;
    }
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return new DatabaseCpu(client);
  }

  async ms(): Promise<number | undefined> {
    const { rows } = await this.client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    // A backend that exits between the query and the read is skipped; none readable means no /proc access.
    const times = rows.map(({ pid }) => processCpuMs(pid)).filter((ms): ms is number => ms !== undefined);
    return rows.length > 0 && times.length === 0 ? undefined : times.reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

type Measured = LoadResult & { runs: LoadResult[]; cpuMsPerOp: number; dbCpuMsPerOp: number };

async function measure(s: Scenario, measuresServer = true): Promise<Measured> {
  const results: LoadResult[] = [];
  const cpuPerOp: number[] = [];
  const dbCpuPerOp: number[] = [];
  if (!s.measure) {
    // One second of unmeasured load first (connections, JIT, caches), outside the CPU figures too.
    await runLoad(s.name, s.op, { concurrency: s.concurrency ?? concurrency, seconds: 1, warmupSeconds: 0 });
  }
  for (let r = 0; r < runs; r++) {
    const serverCpu = s.serverCpuMs ?? (() => server?.cpuMs());
    const cpuBefore = measuresServer ? serverCpu() : undefined;
    const dbBefore = await databaseCpu?.ms();
    const res = s.measure
      ? await s.measure(seconds)
      : await runLoad(s.name, s.op, { concurrency: s.concurrency ?? concurrency, seconds, warmupSeconds: 0 });
    results.push(res);
    const cpuAfter = measuresServer ? serverCpu() : undefined;
    const dbAfter = await databaseCpu?.ms();
    const dbCpu =
      dbBefore !== undefined && dbAfter !== undefined && res.count > 0
        ? Math.max(0, dbAfter - dbBefore) / res.count
        : NaN;
    dbCpuPerOp.push(dbCpu);
    const cpu =
      cpuBefore !== undefined && cpuAfter !== undefined && res.count > 0 ? (cpuAfter - cpuBefore) / res.count : NaN;
    cpuPerOp.push(cpu);
    log(
      `  ${s.name} run ${r + 1}: ${fmt(res.rate)} ${s.unit}, p50 ${fmt(res.p50, 1)} ms, p95 ${fmt(res.p95, 1)} ms, server cpu ${fmt(cpu, 2)} ms/op, db cpu ${fmt(dbCpu, 2)} ms/op, errors ${res.errors}${res.firstError ? ` (${res.firstError})` : ''}`,
    );
  }
  return {
    name: s.name,
    count: results.reduce((a, r) => a + r.count, 0),
    errors: results.reduce((a, r) => a + r.errors, 0),
    seconds: results.reduce((a, r) => a + r.seconds, 0),
    rate: median(results.map((r) => r.rate)),
    p50: median(results.map((r) => r.p50)),
    p95: median(results.map((r) => r.p95)),
    p99: median(results.map((r) => r.p99)),
    firstError: results.find((r) => r.firstError)?.firstError,
    runs: results,
    cpuMsPerOp: median(cpuPerOp),
    dbCpuMsPerOp: median(dbCpuPerOp),
  };
}

/** Single-row INSERTs of a ~1 KB JSONB row straight through the driver: the ceiling for one write. */
async function baseline(databaseUrl: string): Promise<Scenario & { cleanup(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: concurrency });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_baseline (id uuid PRIMARY KEY, content jsonb NOT NULL)');
  await pool.query('TRUNCATE bench_baseline');
  const row = JSON.stringify({ resourceType: 'Patient', text: 'x'.repeat(900), name: [{ family: 'Baseline' }] });
  return {
    name: 'raw SQL INSERT (baseline)',
    unit: 'req/s',
    op: async () => {
      await pool.query('INSERT INTO bench_baseline (id, content) VALUES ($1, $2)', [
        globalThis.crypto.randomUUID(),
        row,
      ]);
    },
    async cleanup() {
      await pool.query('DROP TABLE IF EXISTS bench_baseline');
      await pool.end();
    },
  };
}

async function main(): Promise<void> {
  if (args.only === 'harness') {
    return runHarnessComparison({ email: args.email as string, password: args.password as string }, log);
  }
  if (args.only === 'wal') {
    return measureWal({ email: args.email as string, password: args.password as string }, log);
  }
  if (args.only === 'agent-mllp') {
    const admin = { email: args.email as string, password: args.password as string };
    return runAgentMllpBench(admin, { seconds, runs }, log);
  }
  if (args.only === 'import') {
    const admin = { email: args.email as string, password: args.password as string };
    return runImportBench(admin, { baseUrl: args['base-url'] }, log);
  }
  if (args.only === 'validation') {
    return runValidationBench({ runs }, log);
  }
  if (args.only === 'measures') {
    const admin = { email: args.email as string, password: args.password as string };
    return runMeasuresBench(admin, { runs, copies: Number(args.copies), keepData: args['keep-data'] === true }, log);
  }
  if (args.only === 'app') {
    const admin = { email: args.email as string, password: args.password as string };
    return runAppBench(admin, { runs, baseUrl: args['base-url'] }, log);
  }
  let baseUrl = args['base-url'];
  if (!baseUrl) {
    log('starting server (embedded PostgreSQL unless DATABASE_URL is set)...');
    server = await startServer({ email: args.email as string, password: args.password as string });
    baseUrl = server.baseUrl;
  }
  if (!baseUrl.endsWith('/')) {
    baseUrl += '/';
  }
  const client = new BenchClient(`${baseUrl}fhir/R4`, concurrency);
  const finishers: (() => Promise<void>)[] = [];
  try {
    client.headers = await signIn(baseUrl, args.email as string, args.password as string);
    const databaseUrl = server?.databaseUrl ?? process.env.DATABASE_URL;
    const ctx: BenchContext = {
      client,
      concurrency,
      scale,
      log,
      databaseUrl,
      cpuMs: async () => ({ server: server?.cpuMs(), db: await databaseCpu?.ms() }),
      onFinish: (cleanup) => finishers.push(cleanup),
    };
    const rows: { s: Scenario; r: Measured }[] = [];
    let baselineRate = NaN;
    if (databaseUrl) {
      databaseCpu = await DatabaseCpu.open(databaseUrl);
      log('measuring raw-SQL baseline...');
      const b = await baseline(databaseUrl);
      const r = await measure(b, false);
      // The baseline's own connections are the only ones it measures: its figure is the DB cost of one INSERT.
      baselineRate = r.rate;
      rows.push({ s: b, r });
      await b.cleanup();
    } else {
      log('no DATABASE_URL for the target server: ratios to the raw-SQL baseline are not shown');
    }
    const only = args.only as string;
    const groups: (() => Promise<Scenario[]>)[] = [];
    if (only === 'all' || only === 'core') {
      groups.push(() => coreScenarios(ctx));
    }
    if (only === 'all' || only === 'search') {
      groups.push(() => searchScenarios(ctx));
    }
    if (only === 'all' || only === 'automation') {
      groups.push(() => automationScenarios(ctx));
    }
    if (only === 'all' || only === 'terminology') {
      groups.push(() => terminologyScenarios(ctx));
    }
    if (only === 'all' || only === 'processes') {
      groups.push(() =>
        processesScenarios(ctx, server, { email: args.email as string, password: args.password as string }),
      );
    }
    // The audit trail's cost, off against full: only when asked for by name.
    if (only === 'audit') {
      groups.push(() => auditScenarios(ctx));
    }
    // Needs freshly created tables: only when asked for by name.
    if (only === 'unanalyzed') {
      groups.push(() => unanalyzedScenarios(ctx));
    }
    for (const group of groups) {
      for (const s of await group()) {
        if (filters.length > 0 && !filters.some((f) => s.name.toLowerCase().includes(f))) {
          continue;
        }
        await s.setup?.();
        log(`measuring ${s.name}...`);
        const r = await measure(s);
        s.after?.(r);
        rows.push({ s, r });
      }
    }
    const peak = server?.peakMemoryMb();
    report(rows, baselineRate, peak);
  } finally {
    for (const finish of finishers) {
      await finish().catch((err: unknown) => log(`cleanup failed: ${String(err)}`));
    }
    await client.close();
    await databaseCpu?.close();
    await server?.stop();
  }
}

function report(rows: { s: Scenario; r: Measured }[], baselineRate: number, peakMb: number | undefined): void {
  const lines: string[] = [];
  lines.push('');
  lines.push(
    `Hearth benchmark: concurrency ${concurrency}, ${runs} runs of ${seconds} s each, medians; ratio = rate / raw-SQL INSERT rate`,
  );
  lines.push('');
  const header = [
    'workload',
    'rate',
    'unit',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'ratio',
    'srv cpu ms/op',
    'db cpu ms/op',
    'errors',
    'target',
  ];
  const table = rows.map(({ s, r }) => [
    s.name,
    fmt(r.rate),
    s.unit,
    fmt(r.p50, 1),
    fmt(r.p95, 1),
    fmt(r.p99, 1),
    Number.isFinite(baselineRate) ? fmt(r.rate / baselineRate, 3) : '-',
    fmt(r.cpuMsPerOp, 2),
    fmt(r.dbCpuMsPerOp, 2),
    String(r.errors),
    s.target ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  lines.push(line(header));
  lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table) {
    lines.push(line(row));
  }
  lines.push('');
  if (peakMb !== undefined) {
    lines.push(`server peak memory (VmHWM): ${fmt(peakMb)} MB (target < 350 MB)`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
