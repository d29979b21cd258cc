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
    'Public URL of the server, used in links, Location headers and token issuer. Defaults to `http://localhost:{PORT}/`.',
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
    'Directory for the embedded PostgreSQL, keys, and Binary content files when HEARTH_BINARY_STORAGE is files.',
  ),
  databasePoolSize: key('HEARTH_DB_POOL_SIZE', 'integer', 20, 'Maximum connections in the PostgreSQL pool.'),
  databaseStatementTimeoutMs: key(
    'HEARTH_DB_STATEMENT_TIMEOUT_MS',
    'integer',
    30000,
    'PostgreSQL statement_timeout for every connection; bounds the cost of any one query.',
  ),
  databaseAcquireTimeoutMs: key(
    'HEARTH_DB_ACQUIRE_TIMEOUT_MS',
    'integer',
    5000,
    'Longest a request waits for a PostgreSQL connection (a free one from the pool, or a new one opened) before it answers 503 with Retry-After: an exhausted pool or an unreachable database never hangs a request.',
  ),
  autoAnalyze: key(
    'HEARTH_AUTO_ANALYZE',
    'boolean',
    true,
    "Whether the server refreshes the planner statistics (ANALYZE) of tables that grew or shrank a lot since their last ANALYZE, so search plans do not wait for autovacuum (which may be off, or minutes behind a large import). Every process compares PostgreSQL's own row counts with those of the last ANALYZE every 5 s, on a connection of its own; an advisory lock keeps two processes from analyzing one table at once.",
  ),
  autoAnalyzeGrowthPercent: key(
    'HEARTH_AUTO_ANALYZE_GROWTH_PERCENT',
    'integer',
    10,
    'With HEARTH_AUTO_ANALYZE: a table is analyzed again once it grew or shrank by more than this percentage of its rows (plus 50 rows) since its last ANALYZE.',
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
  binaryStorage: key(
    'HEARTH_BINARY_STORAGE',
    'string',
    'postgres',
    'Where Binary content (uploads, bot code, $export files) is kept: postgres (in the database, in chunks of 1 MB, shared by every process on it) or files (under HEARTH_DATA_DIR/binary; several processes must then share that directory). Switching does not move content already stored.',
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
  jobLeaseSeconds: key(
    'HEARTH_JOB_LEASE_SECONDS',
    'integer',
    30,
    'How long a background job stays with the process running it without that process renewing it (every third of this). The jobs of a process that died (kill -9, lost host) run again on another process about this long later.',
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
    'Delivery attempts of one notification before it is given up (a Subscription may set its own, 1 to 20, with the subscription-max-attempts extension).',
  ),
  subscriptionHeartbeatMs: key(
    'HEARTH_SUBSCRIPTION_HEARTBEAT_MS',
    'integer',
    5000,
    'How often each process records that it is alive and looks for dead ones (one statement). A process silent for 4 intervals is taken as dead: the changes it may not have queued for subscription evaluation yet are evaluated by another (notifications are at least once after a crash).',
  ),
  fhircastAckTimeoutMs: key(
    'HEARTH_FHIRCAST_ACK_TIMEOUT_MS',
    'integer',
    10_000,
    'How long a FHIRcast websocket subscriber has to acknowledge an event before the hub sends SyncError to the other subscribers of its topic.',
  ),
  subscriptionBatchWindowMs: key(
    'HEARTH_SUBSCRIPTION_BATCH_WINDOW_MS',
    'integer',
    5,
    'How long committed writes are gathered before their subscription evaluations are queued together. Tests widen it to crash a process with changes not yet queued.',
  ),
  cacheMaxAgeMs: key(
    'HEARTH_CACHE_MAX_AGE_MS',
    'integer',
    30_000,
    "How long a process may keep what it cached from the database (required-binding value sets, a project's search parameters and subscriptions) without reading it again. Writes tell every process at once; this bounds a cache when a process missed that message (its bus connection was reconnecting).",
  ),
  auditRetentionDays: key(
    'HEARTH_AUDIT_RETENTION_DAYS',
    'integer',
    0,
    'How long the access audit trail keeps its entries, in days, server-wide: whole months older than it are dropped by a background job (hourly). 0 keeps them for good. A project can keep its own entries for less (Project.setting auditRetentionDays). See docs/compliance.md.',
  ),
  auditFlushMs: key(
    'HEARTH_AUDIT_FLUSH_MS',
    'integer',
    1000,
    'Longest an audit trail entry of a read waits in memory before it is written (entries are written in batches; those of writes are written with the write itself).',
  ),
  auditMaxBuffered: key(
    'HEARTH_AUDIT_MAX_BUFFERED',
    'integer',
    100_000,
    'Most audit trail entries a process keeps in memory while the database cannot take them; past it the oldest entries of reads are dropped, with a warning.',
  ),
  logLevel: key(
    'HEARTH_LOG_LEVEL',
    'string',
    'info',
    'Log level: fatal, error, warn, info, debug, trace or silent. At `info` each request writes one JSON line when it is done (`reqId`, `method`, `url` with query values left out, `statusCode`, `responseTime` in ms, `remoteAddress`, and for FHIR requests `interaction`, `resourceType`, `operation`, `project`, `user`; with traces exported `traceId`, `spanId`); `warn` leaves it out.',
  ),
  logFormat: key(
    'HEARTH_LOG_FORMAT',
    'string',
    '',
    'Log format: `json` (one JSON object a line, for log shippers) or `pretty` (coloured, one readable line per entry, through pino-pretty; for development, slower). Empty: `pretty` when NODE_ENV is not `production` and stdout is a terminal, `json` otherwise.',
  ),
  metricsToken: key(
    'HEARTH_METRICS_TOKEN',
    'string',
    '',
    'Bearer token that `GET /metrics` (Prometheus text format) requires. Empty: /metrics answers 404 and no metrics are collected unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/self-hosting/opentelemetry.md).',
    true,
  ),
  otelEndpoint: key(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'string',
    '',
    'OTLP/HTTP endpoint (an OpenTelemetry Collector, the Datadog Agent: `http://localhost:4318`) to which traces and metrics are exported. Empty: no OpenTelemetry at all (the SDK is not loaded). The standard OTEL_* variables refine it: OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or http/json), OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER (`none` turns a signal off), OTEL_METRIC_EXPORT_INTERVAL.',
  ),
  shutdownTimeoutMs: key(
    'HEARTH_SHUTDOWN_TIMEOUT_MS',
    'integer',
    10000,
    'How long graceful shutdown waits for in-flight requests to finish.',
  ),
  // ---- HTTP connections: how long a client may take (a stalled client holds a socket, never a worker) ----
  headersTimeoutMs: key(
    'HEARTH_HEADERS_TIMEOUT_MS',
    'integer',
    20000,
    'Longest a client may take to send the request line and headers; after it the connection gets 408 and is closed.',
  ),
  requestTimeoutMs: key(
    'HEARTH_REQUEST_TIMEOUT_MS',
    'integer',
    120000,
    'Longest a client may take to send a whole request (headers and body); after it the connection gets 408 and is closed. Large Binary uploads over slow links need it long.',
  ),
  idleTimeoutMs: key(
    'HEARTH_IDLE_TIMEOUT_MS',
    'integer',
    120000,
    'A connection on which nothing moves in either direction for this long is closed (a client that stops reading or sending mid-request).',
  ),
  keepAliveTimeoutMs: key(
    'HEARTH_KEEP_ALIVE_TIMEOUT_MS',
    'integer',
    72000,
    "How long an idle keep-alive connection stays open between requests. Behind a load balancer, keep it longer than the balancer's own idle timeout.",
  ),
  corsOrigins: key(
    'HEARTH_CORS_ORIGINS',
    'string[]',
    ['*'],
    'Origins whose browser pages may call the API (comma separated). An origin named here (https://app.example.org) may send credentials (cookies); * lets any other origin call it without credentials (bearer tokens). An origin matched by neither is refused.',
  ),
  // ---- identity and access (auth/) ----
  appBaseUrl: key(
    'HEARTH_APP_BASE_URL',
    'string',
    '',
    'Public URL of the web app, used in sign-in, invitation and password reset links. Defaults to the server URL.',
  ),
  registrationEnabled: key(
    'HEARTH_REGISTRATION_ENABLED',
    'boolean',
    true,
    'Whether anyone may register (POST /auth/newuser, /auth/newproject). Off: only invited users sign in.',
  ),
  accessTokenLifetimeSeconds: key(
    'HEARTH_ACCESS_TOKEN_LIFETIME_SECONDS',
    'integer',
    3600,
    'Lifetime of access tokens (a ClientApplication may shorten it with accessTokenLifetime).',
  ),
  refreshTokenLifetimeSeconds: key(
    'HEARTH_REFRESH_TOKEN_LIFETIME_SECONDS',
    'integer',
    14 * 24 * 3600,
    'Lifetime of refresh tokens; each refresh rotates the token.',
  ),
  signingAlgorithm: key('HEARTH_SIGNING_ALGORITHM', 'string', 'ES256', 'JWT signing algorithm: ES256 or RS256.'),
  keyRotationDays: key(
    'HEARTH_KEY_ROTATION_DAYS',
    'integer',
    30,
    'Age after which a new signing key is generated; older keys still verify until their tokens expire.',
  ),
  authCacheMs: key(
    'HEARTH_AUTH_CACHE_MS',
    'integer',
    2000,
    'How long a process may reuse a verified session (login, membership, policy) before reading it again. Writes in the same process invalidate at once.',
  ),
  googleClientId: key(
    'HEARTH_GOOGLE_CLIENT_ID',
    'string',
    '',
    'OAuth client id for Sign in with Google (POST /auth/google); projects may add their own in Project.site.',
  ),
  googleJwksUrl: key(
    'HEARTH_GOOGLE_JWKS_URL',
    'string',
    'https://www.googleapis.com/oauth2/v3/certs',
    "Where Google's ID token signing keys are read from.",
  ),
  smtpHost: key(
    'HEARTH_SMTP_HOST',
    'string',
    '',
    'SMTP relay host for outgoing email. Empty: email is logged, not sent.',
  ),
  smtpPort: key('HEARTH_SMTP_PORT', 'integer', 587, 'SMTP relay port.'),
  smtpSecure: key(
    'HEARTH_SMTP_SECURE',
    'boolean',
    false,
    'Use TLS from the start (port 465); otherwise STARTTLS when offered.',
  ),
  smtpTlsVerify: key(
    'HEARTH_SMTP_TLS_VERIFY',
    'boolean',
    true,
    "Verify the SMTP relay's TLS certificate. Turn off only for a relay on a trusted network with a self-signed certificate.",
  ),
  smtpUser: key('HEARTH_SMTP_USER', 'string', '', 'SMTP user name (empty: no authentication).'),
  smtpPassword: key('HEARTH_SMTP_PASSWORD', 'string', '', 'SMTP password.', true),
  emailFrom: key('HEARTH_EMAIL_FROM', 'string', 'Hearth <no-reply@localhost>', 'From address of outgoing email.'),
  loginFailuresPerAccount: key(
    'HEARTH_LOGIN_FAILURES_PER_ACCOUNT',
    'integer',
    10,
    'Failed sign-ins for one email within 15 minutes before that account is locked for the rest of the window.',
  ),
  rateLimitRequestsPerMinute: key(
    'HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE',
    'integer',
    6000,
    'Requests per minute per signed-in user; 0 disables. Per project: the systemSetting rateLimitRequestsPerMinute (super admins) replaces it, the setting of that name (project admins) may only lower it. Anonymous calls count against the per-IP limit.',
  ),
  rateLimitIpRequestsPerMinute: key(
    'HEARTH_RATE_LIMIT_IP_REQUESTS_PER_MINUTE',
    'integer',
    12000,
    'Requests per minute from one IP address, whoever signs in; 0 disables.',
  ),
  rateLimitAuthRequestsPerMinute: key(
    'HEARTH_RATE_LIMIT_AUTH_REQUESTS_PER_MINUTE',
    'integer',
    60,
    'Sign-in requests (/auth/*, /oauth2/token, /oauth2/authorize) per minute per IP; 0 disables. For sign-ins naming a project (projectId, or a client of it), its systemSetting rateLimitAuthRequestsPerMinute (super admins) replaces it and its setting of that name may only lower it.',
  ),
  redisUrl: key(
    'HEARTH_REDIS_URL',
    'string',
    '',
    'Redis for shared rate-limit counters and the subscription message bus between processes. Empty: PostgreSQL serves both (counter tables, LISTEN/NOTIFY).',
    true,
  ),
  // ---- GraphQL (graphql/) ----
  graphqlIntrospection: key(
    'HEARTH_GRAPHQL_INTROSPECTION',
    'boolean',
    true,
    'Whether $graphql answers introspection queries (`__schema`, `__type`), which GraphiQL and code generators use.',
  ),
  graphqlMaxDepth: key(
    'HEARTH_GRAPHQL_MAX_DEPTH',
    'integer',
    16,
    'Deepest nesting of fields in a $graphql query (introspection fields not counted); deeper queries are a 400.',
  ),
  graphqlMaxCost: key(
    'HEARTH_GRAPHQL_MAX_COST',
    'integer',
    10000,
    'Largest estimated cost of a $graphql query: each search counts 1 plus its page size (_count, default 20), each read, resolved reference or write 1, multiplied by the items of the lists they are in. Costlier queries are a 400.',
  ),
  graphiqlEnabled: key(
    'HEARTH_GRAPHIQL_ENABLED',
    'boolean',
    true,
    "Whether /fhir/R4/$graphiql sends browsers to the web app's GraphiQL page (/graphiql, at HEARTH_APP_BASE_URL or on this server).",
  ),
} as const;

export type ConfigSchema = typeof configSchema;
export type Config = { -readonly [K in keyof ConfigSchema]: ConfigSchema[K]['default'] };
