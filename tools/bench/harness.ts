import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { signIn } from './auth.js';
import { freePort, startServer, type BenchServer } from './server.js';

/**
 * `npm run bench -- --only harness`: the independent FHIR load harness (../shared/fhir-bench) against
 * Hearth on its default settings (logging at info) and, in the same run, against the harness's
 * near-limit server (node:http + pg, one statement per request), each on a fresh database of the
 * same PostgreSQL (DATABASE_URL's, else Hearth's embedded one). Prints each workload's rate and its
 * ratio to the near-limit's: W1 and W7 (resources/s) to its create rate, W3/W3b to its update rate,
 * the reads and searches to its read rate.
 * HEARTH_BENCH_HARNESS_DIR names the harness elsewhere (e.g. from a git worktree);
 * HEARTH_BENCH_HARNESS_SEED_ARGS and HEARTH_BENCH_HARNESS_RUN_ARGS pass options to the harness's
 * `seed` and `run` (e.g. '--patients 200' and '--duration 3 --warmup 1' for a smoke run).
 */
export async function runHarnessComparison(
  admin: { email: string; password: string },
  log: (line: string) => void,
): Promise<void> {
  const source = resolve(process.env.HEARTH_BENCH_HARNESS_DIR || '../shared/fhir-bench');
  if (!existsSync(resolve(source, 'src/cli.js'))) {
    log(`harness: no FHIR load harness at ${source}: skipped (place fhir-bench beside the repository)`);
    return;
  }
  const work = resolve('.hearth-bench', `harness-${process.pid}`);
  const harness = prepareHarness(source, resolve('.hearth-bench', 'fhir-bench'), log);
  mkdirSync(work, { recursive: true });
  const created: { adminUrl: string; name: string }[] = [];
  let hearth: BenchServer | undefined;
  let nearLimit: ChildProcess | undefined;
  try {
    const hearthDb = process.env.DATABASE_URL ? await freshDatabase(process.env.DATABASE_URL, 'hearth', created) : '';
    log(`harness: starting Hearth on its default settings; results in ${work}`);
    hearth = await startServer(admin, {
      label: 'harness',
      env: { HEARTH_LOG_LEVEL: 'info' },
      ...(hearthDb ? { databaseUrl: hearthDb } : {}),
    });
    const nearLimitDb = await freshDatabase(hearth.databaseUrl, 'near_limit', created);
    const nearLimitPort = await freePort();
    nearLimit = spawn(process.execPath, ['tools/near-limit-server.mjs'], {
      cwd: harness,
      env: { ...process.env, DATABASE_URL: nearLimitDb, PORT: String(nearLimitPort) },
      stdio: 'ignore',
    });
    const nearLimitBase = `http://127.0.0.1:${nearLimitPort}/fhir/R4`;
    await waitFor(`${nearLimitBase}/Patient/none`);
    const tokenFile = resolve(work, 'token.txt');
    const auth = await signIn(hearth.baseUrl, admin.email, admin.password);
    writeFileSync(tokenFile, (auth.authorization ?? 'Bearer none').replace(/^Bearer /, ''), { mode: 0o600 });

    const targets = [
      { name: 'hearth', base: `${hearth.baseUrl}fhir/R4`, databaseUrl: hearth.databaseUrl, workloads: undefined },
      { name: 'near-limit', base: nearLimitBase, databaseUrl: nearLimitDb, workloads: 'W1,W2,W3' },
    ];
    const results: Record<string, Map<string, WorkloadResult>> = {};
    for (const t of targets) {
      const common = ['--base', t.base, '--token-file', tokenFile, '--state', resolve(work, `${t.name}-state.json`)];
      log(`harness: seeding ${t.name}...`);
      harnessCli(harness, ['seed', ...common, ...words(process.env.HEARTH_BENCH_HARNESS_SEED_ARGS)]);
      await analyze(t.databaseUrl);
      log(`harness: running the workloads against ${t.name}...`);
      const out = resolve(work, `${t.name}-run.json`);
      harnessCli(harness, [
        'run',
        ...common,
        '--json',
        out,
        ...(t.workloads ? ['--workloads', t.workloads] : []),
        ...words(process.env.HEARTH_BENCH_HARNESS_RUN_ARGS),
      ]);
      const run = JSON.parse(readFileSync(out, 'utf8')) as { workloads: WorkloadResult[] };
      results[t.name] = new Map(run.workloads.map((w) => [w.id, w]));
    }
    printComparison(results.hearth, results['near-limit'], log);
  } finally {
    // The run's JSON stays in `work`; the token does not outlive the run.
    rmSync(resolve(work, 'token.txt'), { force: true });
    nearLimit?.kill('SIGTERM');
    await hearth?.stop();
    for (const { adminUrl, name } of created.reverse()) {
      await dropDatabase(adminUrl, name).catch(() => undefined);
    }
  }
}

interface WorkloadResult {
  id: string;
  reqPerS?: number;
  resourcesPerS?: number;
  errors?: number;
  checkFailures?: number;
  skipped?: string;
}

/** Which near-limit rate each workload is set against (the issue's targets). */
const REFERENCE: Record<string, string> = {
  W1: 'W1',
  W2: 'W2',
  W3: 'W3',
  W3b: 'W3',
  W4: 'W2',
  W5: 'W2',
  W6: 'W2',
  W7: 'W1',
  W8: 'W2',
};

function printComparison(
  hearth: Map<string, WorkloadResult>,
  nearLimit: Map<string, WorkloadResult>,
  log: (line: string) => void,
): void {
  log('');
  log('workload  Hearth (default settings)      near-limit   ratio   errors/check failures');
  for (const [id, w] of hearth) {
    const rate = id === 'W7' ? w.resourcesPerS : w.reqPerS;
    const unit = id === 'W7' ? 'resources/s' : '/s';
    const ref = nearLimit.get(REFERENCE[id] ?? '')?.reqPerS;
    const ratio = rate !== undefined && ref ? (rate / ref).toFixed(2) : '-';
    log(
      `${id.padEnd(9)} ${w.skipped ? `skipped: ${w.skipped}` : `${rate ?? '-'} ${unit}`.padEnd(30)} ${String(ref ?? '-').padEnd(12)} ${ratio.padEnd(7)} ${w.errors ?? '-'}/${w.checkFailures ?? '-'}`,
    );
  }
}

/** A copy of the harness with its dependencies installed (once), so the shared tree is never written to. */
function prepareHarness(source: string, copy: string, log: (line: string) => void): string {
  cpSync(source, copy, {
    recursive: true,
    filter: (path) => !/\/(node_modules|results)(\/|$)/.test(path.slice(source.length)),
  });
  if (!existsSync(resolve(copy, 'node_modules'))) {
    log('harness: installing its dependencies (npm ci)...');
    execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: copy, stdio: 'inherit' });
  }
  return copy;
}

function harnessCli(harness: string, argv: string[]): void {
  execFileSync(process.execPath, [resolve(harness, 'src/cli.js'), ...argv], { stdio: 'inherit' });
}

function words(value: string | undefined): string[] {
  return (value ?? '').split(' ').filter(Boolean);
}

/** Creates a database of its own beside the one `url` names and returns its URL. */
async function freshDatabase(url: string, prefix: string, created: { adminUrl: string; name: string }[]) {
  const name = `${prefix}_harness_${process.pid}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  created.push({ adminUrl: url, name });
  const fresh = new URL(url);
  fresh.pathname = `/${name}`;
  return fresh.toString();
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Statistics for the seeded tables, as a database that had run a while would have. */
async function analyze(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} did not answer`);
}
