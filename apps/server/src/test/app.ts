import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLogger } from '../platform/logger.js';
import { createPool, type Pool } from '../platform/postgres.js';
import { createServices, type Services } from '../services.js';
import { buildApp } from '../app.js';
import { createTelemetry } from '../observability/setup.js';
import type { Telemetry } from '../observability/telemetry.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { createTestProject, type TestProject } from './auth.js';

export interface TestApp {
  app: FastifyInstance;
  pool: Pool;
  services: Services;
  config: Config;
  db: TestDatabase;
  /** Absolute base URL ('http://127.0.0.1:PORT/' when listening). */
  baseUrl: string;
  /** A fresh project of this app whose admin is signed in: its id, user, tokens... */
  testProject: TestProject;
  /** The project admin's access token. */
  token: string;
  /** `{ authorization: 'Bearer …' }`: pass as `headers` to app.inject to act as the test project's admin. */
  authHeaders: { authorization: string };
  /** Its traces and metrics (none unless the config asks for them). */
  telemetry: Telemetry;
  /** The super admin's credentials (from config). */
  superAdmin: { email: string; password: string };
  close(): Promise<void>;
}

/** The first super admin's password in tests (never printed: it is configured). */
export const TEST_SUPER_ADMIN_PASSWORD = 'test-super-admin-password';

export async function getFreePort(): Promise<number> {
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

/**
 * A whole Hearth app on a fresh database of its own. `listen: true` binds a real port (for
 * clients that need one: concurrency tests, SDKs); otherwise use app.inject().
 */
export async function createTestApp(
  options: {
    listen?: boolean;
    config?: Partial<Config>;
    db?: TestDatabase;
    /** The OTEL_* variables OpenTelemetry reads, when `config.otelEndpoint` turns it on. */
    otelEnv?: NodeJS.ProcessEnv;
  } = {},
): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase());
  const port = options.listen ? await getFreePort() : 8103;
  const baseUrl = options.listen ? `http://127.0.0.1:${port}/` : 'http://localhost:8103/';
  // Files (Binary content) go to a directory of this app's own, removed on close.
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-test-'));
  const config = loadConfig(
    {},
    {
      logLevel: 'silent',
      port,
      baseUrl,
      databaseUrl: db.url,
      dataDir,
      adminPassword: TEST_SUPER_ADMIN_PASSWORD,
      // Every test file signs in many times from one address: the sign-in limits are for production.
      rateLimitAuthRequestsPerMinute: 0,
      // Tests that fire many requests at once on a loaded machine wait for connections rather than
      // get 503s; the acquire timeout itself is tested with its own value (faults/timeouts.test.ts).
      databaseAcquireTimeoutMs: 30_000,
      ...options.config,
    },
  );
  const logger = createLogger(config.logLevel);
  const pool = createPool({
    connectionString: db.url,
    max: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    acquireTimeoutMs: config.databaseAcquireTimeoutMs,
  });
  const telemetry = await createTelemetry(config, options.otelEnv ?? {});
  const services = await createServices(config, pool, logger, telemetry);
  const app = await buildApp({ config, pool, logger, services, telemetry });
  if (options.listen) {
    await app.listen({ port, host: '127.0.0.1' });
  }
  const testProject = await createTestProject(app, services);
  return {
    app,
    pool,
    services,
    config,
    db,
    baseUrl,
    testProject,
    token: testProject.token,
    authHeaders: testProject.headers,
    telemetry,
    superAdmin: { email: config.adminEmail, password: config.adminPassword },
    async close() {
      await app.close();
      await telemetry.shutdown?.();
      await pool.end();
      if (!options.db) {
        await db.drop();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
