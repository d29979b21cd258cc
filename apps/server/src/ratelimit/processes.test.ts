// Rate limits across real server processes: two `node main.js` on one database count one user's
// requests together, so alternating between them does not double the allowance.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { buildServerBundle, signInOverHttp, startServerProcess, type ServerBundle } from '../test/process.js';

const ADMIN = { email: 'limits@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const LIMIT = 6;
const PUBLIC_URL = 'http://hearth.test/';

const cleanups: (() => Promise<void> | void)[] = [];
let db: TestDatabase;
let bundle: ServerBundle | undefined;

beforeAll(async () => {
  bundle = await buildServerBundle('ratelimit');
  db = await createTestDatabase();
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  await db?.drop();
  bundle?.remove();
});

async function startServer(): Promise<string> {
  const server = await startServerProcess(
    (bundle as ServerBundle).main,
    {
      DATABASE_URL: db.url,
      // One public URL for both, as behind a load balancer: tokens of one are valid at the other.
      HEARTH_BASE_URL: PUBLIC_URL,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: String(LIMIT),
      HEARTH_RATE_LIMIT_IP_REQUESTS_PER_MINUTE: '0',
      HEARTH_RATE_LIMIT_AUTH_REQUESTS_PER_MINUTE: '0',
    },
    cleanups,
  );
  return server.baseUrl;
}

/** The super admin's access token through /auth/login and /oauth2/token (sign-in requests are not user requests). */
function signIn(baseUrl: string): Promise<string> {
  return signInOverHttp(baseUrl, ADMIN);
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
