import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { redisForSuite, startTestRedis, type TestRedis } from '../test/redis.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';

/** Fixed one-minute windows: start a scenario early in a minute so that it never straddles two. */
async function freshWindow(): Promise<void> {
  const second = new Date().getSeconds();
  if (second > 45) {
    await new Promise((r) => setTimeout(r, (61 - second) * 1000));
  }
}

const me = (t: TestApp, ip = '203.0.113.1') =>
  t.app.inject({ url: '/auth/me', headers: { ...t.authHeaders, 'x-forwarded-for': ip } });

describe('per-user limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { rateLimitRequestsPerMinute: 5 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 429 with an OperationOutcome, RateLimit-* and Retry-After over the limit', async () => {
    await freshWindow();
    const ok = await me(t);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['ratelimit-limit']).toBe('5');
    expect(Number(ok.headers['ratelimit-remaining'])).toBeLessThan(5);
    for (let i = 0; i < 4; i++) {
      expect((await me(t)).statusCode).toBe(200);
    }
    const over = await me(t);
    expect(over.statusCode).toBe(429);
    expect(over.json().resourceType).toBe('OperationOutcome');
    expect(over.json().issue[0].code).toBe('throttled');
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(over.headers['ratelimit-remaining']).toBe('0');
    // Another user is not affected; nor are anonymous health checks.
    expect((await t.app.inject({ url: '/healthcheck' })).statusCode).toBe(200);
  });

  it('a project setting lowers the limit for its members', async () => {
    await freshWindow();
    const other = await createTestApp({ db: t.db, config: { rateLimitRequestsPerMinute: 100 } });
    try {
      const project = (
        await other.app.inject({ url: `/fhir/R4/Project/${other.testProject.projectId}`, headers: other.authHeaders })
      ).json();
      await other.services
        .systemRepo(project.id)
        .updateResource({ ...project, setting: [{ name: 'rateLimitRequestsPerMinute', valueInteger: 2 }] });
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await me(other)).statusCode);
      }
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it("a super admin's project systemSetting raises it; the project's own setting cannot", async () => {
    await freshWindow();
    const other = await createTestApp({ db: t.db, config: { rateLimitRequestsPerMinute: 3 } });
    try {
      // Read and written by the system, so that only the requests under test count.
      const setLimits = async (fields: Record<string, unknown>) => {
        const repo = other.services.systemRepo(other.testProject.projectId);
        const { resource: project } = await repo.readResource('Project', other.testProject.projectId);
        await repo.updateResource({ ...project, ...fields });
      };
      // A project admin asking for more through setting still gets the server's 3.
      await setLimits({ setting: [{ name: 'rateLimitRequestsPerMinute', valueInteger: 50 }] });
      const own: number[] = [];
      for (let i = 0; i < 5; i++) {
        own.push((await me(other, '203.0.113.20')).statusCode);
      }
      expect(own.slice(0, 3)).toEqual([200, 200, 200]);
      expect(own.slice(3)).toEqual([429, 429]);
      // The super admin's systemSetting lifts this project to 50 (another window: a fresh count).
      await setLimits({ systemSetting: [{ name: 'rateLimitRequestsPerMinute', valueInteger: 50 }] });
      const raised = await me(other, '203.0.113.20');
      expect(raised.headers['ratelimit-limit']).toBe('50');
      // A project admin cannot raise it further: systemSetting is read-only to them.
      const project = (
        await other.app.inject({ url: `/fhir/R4/Project/${other.testProject.projectId}`, headers: other.authHeaders })
      ).json();
      const put = await other.app.inject({
        method: 'PUT',
        url: `/fhir/R4/Project/${project.id}`,
        headers: { ...other.authHeaders, 'content-type': 'application/fhir+json' },
        payload: { ...project, systemSetting: [{ name: 'rateLimitRequestsPerMinute', valueInteger: 100000 }] },
      });
      expect(put.json().systemSetting).toEqual([{ name: 'rateLimitRequestsPerMinute', valueInteger: 50 }]);
    } finally {
      await other.close();
    }
  });
});

describe('per-IP limit', () => {
  it('counts every request from one address, anonymous or signed in', async () => {
    await freshWindow();
    const t = await createTestApp({ config: { rateLimitIpRequestsPerMinute: 4, rateLimitRequestsPerMinute: 0 } });
    try {
      const ip = '198.51.100.40';
      const anonymous = () => t.app.inject({ url: '/fhir/R4/metadata', headers: { 'x-forwarded-for': ip } });
      expect((await anonymous()).statusCode).toBe(200);
      expect((await anonymous()).statusCode).toBe(200);
      expect((await me(t, ip)).statusCode).toBe(200);
      expect((await me(t, ip)).statusCode).toBe(200);
      const over = await anonymous();
      expect(over.statusCode).toBe(429);
      expect(over.json().resourceType).toBe('OperationOutcome');
      expect(over.headers['ratelimit-limit']).toBe('4');
      expect(over.headers['retry-after']).toBeTruthy();
      expect((await me(t, ip)).statusCode).toBe(429);
      // Another address has its own allowance.
      expect((await me(t, '198.51.100.41')).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('sign-in limit', () => {
  it('is tighter and per client address', async () => {
    await freshWindow();
    const t = await createTestApp({ config: { rateLimitAuthRequestsPerMinute: 3 } });
    try {
      const login = (ip: string) =>
        t.app.inject({
          method: 'POST',
          url: '/auth/login',
          headers: { 'x-forwarded-for': ip },
          payload: { email: 'nobody@example.com', password: 'wrong password' },
        });
      for (let i = 0; i < 3; i++) {
        expect((await login('198.51.100.7')).statusCode).toBe(400);
      }
      const over = await login('198.51.100.7');
      expect(over.statusCode).toBe(429);
      expect(over.headers['retry-after']).toBeTruthy();
      expect((await login('198.51.100.8')).statusCode).toBe(400);
      const token = await t.app.inject({
        method: 'POST',
        url: '/api/oauth2/token',
        headers: { 'x-forwarded-for': '198.51.100.7', 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials',
      });
      expect(token.statusCode).toBe(429);
    } finally {
      await t.close();
    }
  });
});

describe('sign-in limit per project', () => {
  it("a super admin's project systemSetting raises it for sign-ins naming the project or its client", async () => {
    await freshWindow();
    const t = await createTestApp({ config: { rateLimitAuthRequestsPerMinute: 3 } });
    try {
      const repo = t.services.systemRepo(t.testProject.projectId);
      const { resource: project } = await repo.readResource('Project', t.testProject.projectId);
      await repo.updateResource({
        ...project,
        systemSetting: [{ name: 'rateLimitAuthRequestsPerMinute', valueInteger: 8 }],
      });
      const login = (ip: string, extra: Record<string, string>) =>
        t.app.inject({
          method: 'POST',
          url: '/auth/login',
          headers: { 'x-forwarded-for': ip },
          payload: { email: 'nobody@example.com', password: 'wrong password', ...extra },
        });
      // One hospital address, many staff: sign-ins to this project get the project's 8.
      const hospital = '198.51.100.60';
      const named: number[] = [];
      for (let i = 0; i < 6; i++) {
        named.push((await login(hospital, { projectId: t.testProject.projectId })).statusCode);
      }
      expect(named).toEqual([400, 400, 400, 400, 400, 400]);
      const viaClient = await login(hospital, { clientId: t.testProject.client.id as string });
      expect(viaClient.statusCode).toBe(400);
      expect(viaClient.headers['ratelimit-limit']).toBe('8');
      // Sign-ins that name no project keep the server's 3 for that address.
      const plain: number[] = [];
      for (let i = 0; i < 4; i++) {
        plain.push((await login(hospital, {})).statusCode);
      }
      expect(plain).toEqual([400, 400, 400, 429]);
    } finally {
      await t.close();
    }
  });
});

describe('shared across processes', () => {
  async function twoProcesses(config: Record<string, unknown>, db?: TestDatabase): Promise<void> {
    await freshWindow();
    const first = await createTestApp({ db, config: { rateLimitRequestsPerMinute: 6, ...config } });
    const second = await createTestApp({ db: first.db, config: { rateLimitRequestsPerMinute: 6, ...config } });
    try {
      // The same user, alternating between two servers on one database.
      const headers = first.authHeaders;
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const app = i % 2 === 0 ? first.app : second.app;
        statuses.push((await app.inject({ url: '/auth/me', headers })).statusCode);
      }
      expect(statuses.slice(0, 6)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(statuses.slice(6)).toEqual([429, 429]);
    } finally {
      await second.close();
      await first.close();
    }
  }

  it('through PostgreSQL', async () => {
    await twoProcesses({});
  });

  describe.runIf(redisForSuite())('through Redis', () => {
    let redis: TestRedis;
    let db: TestDatabase;
    beforeAll(async () => {
      redis = await startTestRedis();
      db = await createTestDatabase();
    });
    afterAll(async () => {
      redis?.stop();
      await db?.drop();
    });

    it('with HEARTH_REDIS_URL', async () => {
      await twoProcesses({ redisUrl: redis.url }, db);
      const rows = await import('pg').then(async ({ default: pg }) => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        try {
          return (await c.query("SELECT count(*)::int AS n FROM hearth_rate_counter WHERE key LIKE 'user:%'")).rows[0]
            .n;
        } finally {
          await c.end();
        }
      });
      expect(rows).toBe(0);
    });
  });
});
