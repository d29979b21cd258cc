// Running an unpacked release as an operator does: `bin/hearth` with settings in the environment,
// from a working directory of its own; the first sign-in read from what it prints.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { configSchema } from '../../apps/server/src/config/schema.js';
import { START_SCRIPT } from './release.mjs';

/** The settings the release tests give the server: the same names the Dockerfile and compose file must use. */
export const RELEASE_ENV = {
  port: configSchema.port.env,
  host: configSchema.host.env,
  baseUrl: configSchema.baseUrl.env,
  databaseUrl: configSchema.databaseUrl.env,
  dataDir: configSchema.dataDir.env,
  embeddedPostgresPort: configSchema.embeddedPostgresPort.env,
  adminEmail: configSchema.adminEmail.env,
  logLevel: configSchema.logLevel.env,
} as const;
/** The port a release listens on when PORT is not set. */
export const DEFAULT_PORT = configSchema.port.default;
/** What a load balancer, systemd watchdog or container health check asks. */
export const HEALTHCHECK_PATH = '/healthcheck';
export { START_SCRIPT };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Unpacks a release tarball into `into` (which must be empty) and returns the one folder it made. */
export async function unpackRelease(tarball: string, into: string): Promise<string> {
  await promisify(execFile)('tar', ['-xzf', tarball, '-C', into]);
  const entries = readdirSync(into);
  if (entries.length !== 1) {
    throw new Error(`${tarball} unpacked into ${entries.length} entries, not one folder: ${entries.join(', ')}`);
  }
  return join(into, entries[0]);
}

export interface FirstSignIn {
  url: string;
  email: string;
  password: string;
}

/** The first super admin's sign-in, as the first start prints it (apps/server/src/auth/bootstrap.ts). */
export function parseFirstSignIn(output: string): FirstSignIn | undefined {
  const url = /^\s*URL:\s+(\S+)/m.exec(output)?.[1];
  const email = /^\s*Email:\s+(\S+)/m.exec(output)?.[1];
  const password = /^\s*Password:\s+(\S+)\s+\(generated/m.exec(output)?.[1];
  return url && email && password ? { url, email, password } : undefined;
}

export interface RunningRelease {
  proc: ChildProcess;
  baseUrl: string;
  output: () => string;
  /** SIGTERM, then the exit code once the process is gone (the server drains and exits 0). */
  stop: () => Promise<number | null>;
}

/**
 * Starts `<home>/bin/hearth` in `cwd` with only PATH (for node), HOME and `env`, and resolves once
 * /healthcheck answers 200. The process is killed if it does not come up.
 */
export async function startRelease(
  home: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 180_000,
): Promise<RunningRelease> {
  const port = Number(env[RELEASE_ENV.port] ?? DEFAULT_PORT);
  const proc = spawn(join(home, START_SCRIPT), [], {
    cwd,
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: process.env.HOME ?? cwd,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`${START_SCRIPT} exited with ${proc.exitCode} at start:\n${out}`);
    }
    const ok = await fetch(`${baseUrl}${HEALTHCHECK_PATH.slice(1)}`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${START_SCRIPT} did not answer ${HEALTHCHECK_PATH} in ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    proc,
    baseUrl,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}
