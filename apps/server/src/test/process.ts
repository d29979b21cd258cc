// The built server as a child process, for tests that need real processes (kill -9, several
// processes on one database): build the bundle, start it, wait until healthy, sign in over HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { getFreePort } from './app.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../platform/embedded-postgres.js';
import { NO_NODE_SNAPSHOT } from '../platform/node-flags.js';

const ROOT = resolve(import.meta.dirname, '../../../..');

export interface ServerBundle {
  /** Path of the built main.js. */
  main: string;
  remove(): void;
}

/**
 * Runs a command to its end without blocking this process: a test worker whose event loop stalls
 * for a minute (a build on a busy machine) loses its link to vitest ("Timeout calling onTaskUpdate"),
 * which fails the run though every test passed. Rejects with the command's output when it fails.
 */
export function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; inheritOutput?: boolean },
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: options.inheritOutput ? 'inherit' : 'pipe' });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0
        ? resolvePromise()
        : reject(new Error(`${command} ${args.join(' ')} ended with ${signal ?? `exit code ${code}`}\n${output}`)),
    );
  });
}

/** The server bundle exactly as `npm run build` makes it, written to a directory of this run. */
export async function buildServerBundle(label: string): Promise<ServerBundle> {
  const dir = `apps/server/dist/test-${label}-${randomBytes(4).toString('hex')}`;
  await runToEnd(process.execPath, ['tools/build.mjs', '--server-only', `--server-out=${dir}/main.js`], { cwd: ROOT });
  return { main: join(ROOT, dir, 'main.js'), remove: () => rmSync(join(ROOT, dir), { recursive: true, force: true }) };
}

export interface ServerProcess {
  proc: ChildProcess;
  baseUrl: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything the process printed so far. */
  output: () => string;
}

/**
 * Starts `node --no-node-snapshot main.js` (or `node <nodeArgs> main.js`) on a free port with its own
 * data directory and the given settings, and resolves once /healthcheck answers. `cleanups`
 * receives what undoes it (kill, data directory).
 */
export async function startServerProcess(
  main: string,
  env: Record<string, string>,
  cleanups: (() => Promise<void> | void)[],
  nodeArgs: string[] = [NO_NODE_SNAPSHOT],
): Promise<ServerProcess> {
  const port = await getFreePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-proc-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const baseUrl = `http://127.0.0.1:${port}/`;
  const proc = spawn(process.execPath, [...nodeArgs, main], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HEARTH_HOST: '127.0.0.1',
      HEARTH_BASE_URL: baseUrl,
      HEARTH_DATA_DIR: dataDir,
      HEARTH_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    proc.on('exit', (code, signal) => res({ code, signal })),
  );
  cleanups.push(() => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
    }
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`server exited at start: ${out}`);
    }
    const ok = await fetch(`${baseUrl}healthcheck`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) {
      return { proc, baseUrl, exited, output: () => out };
    }
    if (Date.now() > deadline) {
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** An access token through /auth/login (choosing the first profile when asked) and /oauth2/token with PKCE. */
export async function signInOverHttp(baseUrl: string, user: { email: string; password: string }): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const post = (path: string, body: unknown) =>
    fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
  let login = await post('auth/login', { ...user, codeChallenge: challenge, codeChallengeMethod: 'S256' });
  if (!login.code) {
    const memberships = login.memberships as { id: string }[] | undefined;
    login = await post('auth/profile', { login: login.login, profile: memberships?.[0]?.id });
  }
  const token = await fetch(`${baseUrl}oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: String(login.code), code_verifier: verifier }),
  }).then((r) => r.json() as Promise<{ access_token?: string }>);
  if (!token.access_token) {
    throw new Error(`sign-in failed: ${JSON.stringify(login)} ${JSON.stringify(token)}`);
  }
  return token.access_token;
}

/** The JSON lines a server process logged (pino), skipping anything else it printed. */
export function logLines(server: ServerProcess): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/**
 * Which of `servers` holds the local end of a TCP connection to this test from `localPort` (the
 * remote port a test HTTP server saw): which process made an outbound request (a bot's fetch, a
 * rest-hook delivery). Linux only: /proc/net/tcp names the socket, /proc/<pid>/fd its owner.
 */
export function serverOfConnection<T extends ServerProcess>(servers: T[], localPort: number): T | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; the inode is the tenth field.
      if (fields.length > 9 && parseInt(fields[1].split(':')[1], 16) === localPort) {
        inodes.add(fields[9]);
      }
    }
  }
  return servers.find((server) => {
    const pid = server.proc.pid;
    if (pid === undefined || inodes.size === 0) {
      return false;
    }
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          return inodes.has(target.replace(/^socket:\[(\d+)\]$/, '$1'));
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  });
}

/**
 * A PostgreSQL of the test's own (embedded, own data directory and port) that it may stop and
 * start: the machine's shared server must never be stopped. Returns its connection string (a Unix
 * socket in its data directory) and the handle; `cleanups` stops it and removes its files.
 */
export async function startOwnPostgres(cleanups: (() => Promise<void> | void)[]): Promise<EmbeddedDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-pg-'));
  // As root, PostgreSQL runs as a user of its own (createPostgresUser), which must reach the data directory.
  chmodSync(dir, 0o755);
  const db = await startEmbeddedPostgres(dir, await getFreePort());
  cleanups.push(async () => {
    await db.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}
