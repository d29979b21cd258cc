import { loadConfig, redactConfig } from './config/load.js';
import { createLogger, flushLogger, logDestination, logFormatOf } from './platform/logger.js';
import { createPool } from './platform/postgres.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './platform/embedded-postgres.js';
import { runMigrations } from './storage/migrations/runner.js';
import { createServices } from './services.js';
import { buildApp } from './app.js';
import { collectStartupGarbage, limitHeapGrowth } from './platform/heap.js';
import { missingNodeFlagProblem } from './platform/node-flags.js';
import { createTelemetry } from './observability/setup.js';

/** Loads config, starts the database, builds the app, listens, and shuts down gracefully. */
async function main(): Promise<void> {
  const flagProblem = missingNodeFlagProblem();
  if (flagProblem) {
    console.error(`hearth cannot start: ${flagProblem}`);
    process.exit(1);
  }
  limitHeapGrowth();
  const config = loadConfig();
  const logger = createLogger(
    config.logLevel,
    await logDestination(logFormatOf(config.logFormat, process.env, process.stdout.isTTY === true)),
  );
  logger.info({ config: redactConfig(config) }, 'starting hearth');
  // Before the pool and the app exist: both are measured from their first statement and request.
  const telemetry = await createTelemetry(config);

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    logger.info({ dataDir: config.dataDir }, 'no DATABASE_URL: starting embedded PostgreSQL');
    // The server's own SIGTERM/SIGINT handling below drains requests, then stops PostgreSQL.
    embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, { ownSignals: true });
    databaseUrl = embedded.connectionString;
  }
  const pool = createPool({
    connectionString: databaseUrl,
    max: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    acquireTimeoutMs: config.databaseAcquireTimeoutMs,
  });
  const applied = await runMigrations(pool, logger);
  logger.info({ applied }, 'database migrations done');

  const services = await createServices(config, pool, logger, telemetry);
  const app = await buildApp({ config, pool, logger, services, telemetry });
  collectStartupGarbage();
  await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    try {
      await app.close(); // stops accepting, waits for in-flight requests
      // The last spans and metrics go out while the database is still there to be measured.
      await telemetry.shutdown?.();
      await pool.end();
      // The embedded PostgreSQL's own shutdown (a checkpoint: after a first start's terminology
      // load, about 10 s on a busy 2-core machine) is not cut short by the drain's timeout: exiting
      // 1 then would have a supervisor restart the server while the old PostgreSQL still stops.
      clearTimeout(timer);
      await embedded?.stop();
    } finally {
      logger.info('stopped');
      await flushLogger(logger).catch(() => undefined);
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error('hearth failed to start:', err);
  process.exit(1);
});
