// Rate limits across real server processes: two `node main.js` on one database count one user's
// requests together, so alternating between them does not double the allowance.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getFreePort } from '../test/app.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';

const ROOT = resolve(import.meta.dirname, '../../../..');
const BUILD_DIR = `apps/server/dist/test-ratelimit-${randomBytes(4).toString('hex')}`;
const MAIN = join(ROOT, BUILD_DIR, 'main.js');
const ADMIN = { email: 'limits@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const LIMIT = 6;
const PUBLIC_URL = 'http://hearth.test/';

const cleanups: (() => Promise<void> | void)[] = [];
let db: TestDatabase;

beforeAll(async () => {
  execFileSync('node', ['tools/build.mjs', '--server-only', `--server-out=${BUILD_DIR}/main.js`], {
    cwd: ROOT,
    stdio: 'pipe',
  });
  db = await createTestDatabase();
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  await db?.drop();
  rmSync(join(ROOT, BUILD_DIR), { recursive: true, force: true });
});

async function startServer(): Promise<string> {
  const port = await getFreePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-limits-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const baseUrl = `http://127.0.0.1:${port}/`;
  const proc: ChildProcess = spawn('node', [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: db.url,
      PORT: String(port),
      HEARTH_HOST: '127.0.0.1',
      // One public URL for both, as behind a load balancer: tokens of one are valid at the other.
      HEARTH_BASE_URL: PUBLIC_URL,
      HEARTH_DATA_DIR: dataDir,
      HEARTH_LOG_LEVEL: 'warn',
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: String(LIMIT),
      HEARTH_RATE_LIMIT_IP_REQUESTS_PER_MINUTE: '0',
      HEARTH_RATE_LIMIT_AUTH_REQUESTS_PER_MINUTE: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
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
      return baseUrl;
    }
    if (Date.now() > deadline) {
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The super admin's access token through /auth/login and /oauth2/token (sign-in requests are not user requests). */
async function signIn(baseUrl: string): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const login = (await fetch(`${baseUrl}auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...ADMIN, codeChallenge: challenge, codeChallengeMethod: 'S256' }),
  }).then((r) => r.json())) as { code?: string };
  const token = (await fetch(`${baseUrl}oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: String(login.code), code_verifier: verifier }),
  }).then((r) => r.json())) as { access_token?: string };
  if (!token.access_token) {
    throw new Error(`sign-in failed: ${JSON.stringify(login)} ${JSON.stringify(token)}`);
  }
  return token.access_token;
}

describe('two server processes on one database', () => {
  it("count one user's requests together", async () => {
    const [first, second] = [await startServer(), await startServer()];
    const token = await signIn(first);
    // Fixed one-minute windows: begin early in a minute so that the run never straddles two.
    const second0 = new Date().getSeconds();
    if (second0 > 40) {
      await new Promise((r) => setTimeout(r, (61 - second0) * 1000));
    }
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await fetch(`${i % 2 === 0 ? first : second}auth/me`, {
        headers: { authorization: `Bearer ${token}` },
      });
      statuses.push(res.status);
      if (res.status === 429) {
        refused = res;
      }
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), 429, 429]);
    const body = (await refused?.json()) as { resourceType?: string };
    expect(body.resourceType).toBe('OperationOutcome');
    expect(refused?.headers.get('ratelimit-limit')).toBe(String(LIMIT));
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
