import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { NO_NODE_SNAPSHOT } from '../../apps/server/src/platform/node-flags.js';

export interface BenchServer {
  baseUrl: string;
  /** Connection string of the server's database, for the raw-SQL baseline. */
  databaseUrl: string;
  pid: number;
  /** Peak resident memory of the server process so far (VmHWM), in MB. */
  peakMemoryMb(): number | undefined;
  /** CPU time the server process has used so far (user + system), in ms: a figure the machine's other load barely moves. */
  cpuMs(): number | undefined;
  /** The last few kB the server wrote to stdout and stderr (its log), to explain a failure. */
  output(): string;
  stop(): Promise<void>;
}

/** USER_HZ: 100 on every Linux the benchmark runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) a process has used so far, in ms, from /proc; undefined where that cannot be read. */
export function processCpuMs(pid: number): number | undefined {
  try {
    // Fields 14 and 15 of /proc/PID/stat (counted after the parenthesised name) are utime and stime, in clock ticks.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => ok(port));
    });
  });
}

/** Node flags for the server process, e.g. HEARTH_BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'. */
function serverNodeArgs(): string[] {
  return (process.env.HEARTH_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/**
 * Starts the built server (apps/server/dist/main.js) as its own process, on a fresh embedded
 * PostgreSQL under .hearth-bench/ unless DATABASE_URL is set. `options.databaseUrl` starts another
 * process on the database of one already running (several processes on one database), with a
 * data directory of its own named by `options.label`; `options.env` overrides the settings below.
 * `options.keepData` starts on the data directory as it is (HEARTH_BENCH_DATA_DIR, data loaded by
 * an earlier run) and leaves it there when stopped.
 */
export async function startServer(
  admin: { email: string; password: string },
  options: { databaseUrl?: string; label?: string; env?: Record<string, string>; keepData?: boolean } = {},
): Promise<BenchServer> {
  const port = await freePort();
  const pgPort = await freePort();
  // One directory per benchmark process, so that two benchmarks on one machine never wipe each other's database.
  const base = process.env.HEARTH_BENCH_DATA_DIR || `.hearth-bench/${process.pid}`;
  const dataDir = resolve(options.label ? `${base}-${options.label}` : base);
  if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
  const databaseUrl =
    options.databaseUrl || process.env.DATABASE_URL || `postgres://postgres:postgres@127.0.0.1:${pgPort}/hearth`;
  const child: ChildProcess = spawn(
    process.execPath,
    [NO_NODE_SNAPSHOT, ...serverNodeArgs(), process.env.HEARTH_BENCH_SERVER || 'apps/server/dist/main.js'],
    {
      env: {
        ...process.env,
        ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
        PORT: String(port),
        HEARTH_BASE_URL: `http://127.0.0.1:${port}/`,
        HEARTH_DATA_DIR: dataDir,
        HEARTH_EMBEDDED_PG_PORT: String(pgPort),
        HEARTH_LOG_LEVEL: 'warn',
        HEARTH_ADMIN_EMAIL: admin.email,
        HEARTH_ADMIN_PASSWORD: admin.password,
        // A benchmark is one user sending far more than production limits allow (0 disables).
        HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: '0',
        HEARTH_RATE_LIMIT_IP_REQUESTS_PER_MINUTE: '0',
        HEARTH_RATE_LIMIT_AUTH_REQUESTS_PER_MINUTE: '0',
        // The automation workloads' rest-hooks call a receiver in the bench process.
        HEARTH_OUTBOUND_ALLOW_LIST: '127.0.0.1',
        // Settings a caller measures under (e.g. the harness: logging at its default).
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const baseUrl = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    }
    try {
      const res = await fetch(`${baseUrl}healthcheck`);
      if (res.ok) {
        break;
      }
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const pid = child.pid as number;
  return {
    baseUrl,
    databaseUrl,
    pid,
    peakMemoryMb() {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const m = /VmHWM:\s+(\d+) kB/.exec(status);
        return m ? Number(m[1]) / 1024 : undefined;
      } catch {
        return undefined;
      }
    },
    cpuMs() {
      return processCpuMs(pid);
    },
    output() {
      return output;
    },
    async stop() {
      if (child.exitCode !== null) {
        return;
      }
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      if (child.exitCode === null) {
        child.kill('SIGKILL');
      }
      if (!options.keepData && (!process.env.HEARTH_BENCH_DATA_DIR || options.label)) {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
