/**
 * Every configuration key, declared once: its environment variable, type, default and meaning.
 * The config reference page (docs/config.md) is generated from this list by `npm run docs:config`.
 */
export type ConfigType = 'string' | 'integer' | 'boolean' | 'string[]';

export interface ConfigKey<T> {
  env: string;
  type: ConfigType;
  default: T;
  description: string;
  /** Secrets are never logged or printed. */
  secret?: boolean;
}

function key<T>(env: string, type: ConfigType, defaultValue: T, description: string, secret = false): ConfigKey<T> {
  return { env, type, default: defaultValue, description, secret };
}

export const configSchema = {
  port: key('PORT', 'integer', 8103, 'TCP port the HTTP server listens on.'),
  host: key('HEARTH_HOST', 'string', '0.0.0.0', 'Interface the HTTP server binds to.'),
  baseUrl: key(
    'HEARTH_BASE_URL',
    'string',
    '',
    'Public URL of the server, used in links, Location headers and token issuer. Defaults to http://localhost:PORT/.',
  ),
  databaseUrl: key(
    'DATABASE_URL',
    'string',
    '',
    'PostgreSQL 14+ connection string. Empty: run an embedded PostgreSQL from the data directory.',
    true,
  ),
  dataDir: key(
    'HEARTH_DATA_DIR',
    'string',
    './.hearth',
    'Directory for the embedded PostgreSQL, binary files and keys.',
  ),
  databasePoolSize: key('HEARTH_DB_POOL_SIZE', 'integer', 20, 'Maximum connections in the PostgreSQL pool.'),
  databaseStatementTimeoutMs: key(
    'HEARTH_DB_STATEMENT_TIMEOUT_MS',
    'integer',
    30000,
    'PostgreSQL statement_timeout for every connection; bounds the cost of any one query.',
  ),
  embeddedPostgresPort: key('HEARTH_EMBEDDED_PG_PORT', 'integer', 5433, 'Port of the embedded PostgreSQL.'),
  adminEmail: key(
    'HEARTH_ADMIN_EMAIL',
    'string',
    'admin@example.com',
    'Email of the first super admin, created on first start.',
  ),
  adminPassword: key(
    'HEARTH_ADMIN_PASSWORD',
    'string',
    '',
    'Password of the first super admin. Empty: a random one is generated and printed once on first start.',
    true,
  ),
  maxBodyBytes: key(
    'HEARTH_MAX_BODY_BYTES',
    'integer',
    16 * 1024 * 1024,
    'Largest JSON request body accepted (413 above).',
  ),
  maxBinaryBytes: key(
    'HEARTH_MAX_BINARY_BYTES',
    'integer',
    256 * 1024 * 1024,
    'Largest Binary upload accepted (413 above).',
  ),
  maxJsonDepth: key('HEARTH_MAX_JSON_DEPTH', 'integer', 64, 'Deepest JSON nesting accepted in a request body.'),
  maxBundleEntries: key(
    'HEARTH_MAX_BUNDLE_ENTRIES',
    'integer',
    10000,
    'Most entries in a batch or transaction Bundle.',
  ),
  // ---- background jobs, bots and subscriptions (jobs/, bots/, subscriptions/) ----
  workersEnabled: key(
    'HEARTH_WORKERS_ENABLED',
    'boolean',
    true,
    'Whether this process runs background jobs (subscription deliveries, bot runs, async operations). Every process may; jobs are shared through PostgreSQL.',
  ),
  workerConcurrency: key('HEARTH_WORKER_CONCURRENCY', 'integer', 16, 'Jobs of one queue this process runs at once.'),
  jobPollingIntervalMs: key(
    'HEARTH_JOB_POLLING_INTERVAL_MS',
    'integer',
    1000,
    'How often an idle worker looks for jobs queued by other processes (at least 500). Jobs queued by the same process start at once.',
  ),
  jobRetryDelaySeconds: key(
    'HEARTH_JOB_RETRY_DELAY_SECONDS',
    'integer',
    10,
    'First retry delay of a failed job; each further retry waits about twice as long (exponential backoff with jitter).',
  ),
  botTimeoutMs: key(
    'HEARTH_BOT_TIMEOUT_MS',
    'integer',
    10000,
    'Longest a bot run may take (wall clock) before its isolate is destroyed; Bot.timeout (seconds) may shorten it.',
  ),
  botMemoryLimitMb: key('HEARTH_BOT_MEMORY_LIMIT_MB', 'integer', 128, 'Heap limit of each bot isolate, in MB.'),
  botWarmIsolates: key(
    'HEARTH_BOT_WARM_ISOLATES',
    'integer',
    16,
    'Idle bot isolates kept warm for reuse (each run still gets a fresh context); 0 creates one isolate per run.',
  ),
  outboundAllowList: key(
    'HEARTH_OUTBOUND_ALLOW_LIST',
    'string[]',
    [] as string[],
    'Hosts, IP addresses or CIDR ranges that rest-hook subscriptions and bot fetch may reach although they are loopback, private, link-local or cloud metadata addresses (blocked otherwise). Comma separated.',
  ),
  outboundTimeoutMs: key(
    'HEARTH_OUTBOUND_TIMEOUT_MS',
    'integer',
    15000,
    'Timeout of one outbound HTTP request (rest-hook delivery, bot fetch).',
  ),
  subscriptionMaxAttempts: key(
    'HEARTH_SUBSCRIPTION_MAX_ATTEMPTS',
    'integer',
    5,
    'Delivery attempts of one notification before it is given up (a Subscription may lower it with the subscription-max-attempts extension).',
  ),
  logLevel: key('HEARTH_LOG_LEVEL', 'string', 'info', 'Log level: fatal, error, warn, info, debug, trace or silent.'),
  shutdownTimeoutMs: key(
    'HEARTH_SHUTDOWN_TIMEOUT_MS',
    'integer',
    10000,
    'How long graceful shutdown waits for in-flight requests to finish.',
  ),
  corsOrigins: key('HEARTH_CORS_ORIGINS', 'string[]', ['*'], 'Origins allowed by CORS (comma separated, * for any).'),
} as const;

export type ConfigSchema = typeof configSchema;
export type Config = { -readonly [K in keyof ConfigSchema]: ConfigSchema[K]['default'] };
