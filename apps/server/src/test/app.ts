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
import { createTestDatabase, type TestDatabase } from './db.js';

export interface TestApp {
  app: FastifyInstance;
  pool: Pool;
  services: Services;
  config: Config;
  db: TestDatabase;
  /** Absolute base URL ('http://127.0.0.1:PORT/' when listening). */
  baseUrl: string;
  close(): Promise<void>;
}

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
  options: { listen?: boolean; config?: Partial<Config>; db?: TestDatabase } = {},
): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase());
  const port = options.listen ? await getFreePort() : 8103;
  const baseUrl = options.listen ? `http://127.0.0.1:${port}/` : 'http://localhost:8103/';
  // Files (Binary content) go to a directory of this app's own, removed on close.
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-test-'));
  const config = loadConfig({}, { logLevel: 'silent', port, baseUrl, databaseUrl: db.url, dataDir, ...options.config });
  const logger = createLogger(config.logLevel);
  const pool = createPool({
    connectionString: db.url,
    max: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  });
  const services = await createServices(config, pool, logger);
  const app = await buildApp({ config, pool, logger, services });
  if (options.listen) {
    await app.listen({ port, host: '127.0.0.1' });
  }
  return {
    app,
    pool,
    services,
    config,
    db,
    baseUrl,
    async close() {
      await app.close();
      await pool.end();
      if (!options.db) {
        await db.drop();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
