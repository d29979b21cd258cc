import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The depth of one job queue: how many jobs wait in each state, and how long the oldest has waited. */
export interface QueueDepth {
  queue: string;
  /** Jobs created (or waiting for a retry) and not yet taken by a worker. */
  waiting: number;
  /** Jobs a worker runs now. */
  active: number;
  /** Seconds since the oldest waiting job became due; 0 when none waits. */
  oldestWaitingSeconds: number;
}

/** What a scrape asks of the rest of the server: read when Prometheus (or the OTLP reader) collects. */
export interface MetricSources {
  /** Connection pools by name ('main', 'jobs'): their size now. */
  pools: Map<string, { totalCount: number; idleCount: number; waitingCount: number; options: { max?: number } }>;
  /** The job queue's depths; undefined until the queue exists. */
  queueDepths?: () => Promise<QueueDepth[]>;
}

/** Seconds buckets for request latency: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Waiting for a pooled connection is 0 when one is free; the tail shows an exhausted pool. */
const WAIT_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];
/** Jobs and bot runs: 1 ms to a minute. */
const RUN_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60];

/**
 * Hearth's metrics, in a prom-client registry of its own (never prom-client's global one): served
 * at /metrics in Prometheus' text format, and exported over OTLP by the same collection when
 * OpenTelemetry is on (observability/otlp-metrics.ts). Built only when metrics are wanted
 * (HEARTH_METRICS_TOKEN or OTEL_EXPORTER_OTLP_ENDPOINT); otherwise nothing is measured.
 *
 * Names follow Prometheus' conventions (base units, `_total` counters); the process metrics are
 * prom-client's defaults (process_resident_memory_bytes, nodejs_heap_size_used_bytes,
 * nodejs_eventloop_lag_p99_seconds, ...).
 */
export class HearthMetrics {
  readonly registry = new Registry();
  readonly sources: MetricSources = { pools: new Map() };

  readonly httpRequestDuration = new Histogram({
    name: 'hearth_http_request_duration_seconds',
    help: 'HTTP requests by method, matched route, FHIR interaction and status code: their count and duration.',
    labelNames: ['method', 'route', 'interaction', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly dbPoolAcquireWait = new Histogram({
    name: 'hearth_db_pool_acquire_seconds',
    help: 'Time spent waiting for a PostgreSQL connection from the pool (a free one, or a new one opened).',
    labelNames: ['pool'] as const,
    buckets: WAIT_BUCKETS,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'hearth_job_duration_seconds',
    help: 'Job attempts by queue and outcome (completed, failed): their count and duration.',
    labelNames: ['queue', 'outcome'] as const,
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });

  readonly subscriptionDeliveries = new Counter({
    name: 'hearth_subscription_deliveries_total',
    help: 'Subscription delivery attempts by channel type and outcome (delivered, failed, skipped).',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly websocketConnections = new Gauge({
    name: 'hearth_websocket_connections',
    help: 'Open websocket connections by endpoint (subscriptions, agent).',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly botRunDuration = new Histogram({
    name: 'hearth_bot_run_duration_seconds',
    help: 'Bot runs by outcome (ok, or the failure reason): their count and duration in the sandbox.',
    labelNames: ['outcome'] as const,
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });

  constructor() {
    const sources = this.sources;
    new Gauge({
      name: 'hearth_db_pool_connections',
      help: 'PostgreSQL pool connections by pool and state: total (open), idle, and max (the configured limit).',
      labelNames: ['pool', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [name, pool] of sources.pools) {
          this.set({ pool: name, state: 'total' }, pool.totalCount);
          this.set({ pool: name, state: 'idle' }, pool.idleCount);
          this.set({ pool: name, state: 'max' }, pool.options.max ?? 10);
        }
      },
    });
    new Gauge({
      name: 'hearth_db_pool_waiting',
      help: 'Callers waiting for a PostgreSQL connection now, by pool.',
      labelNames: ['pool'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [name, pool] of sources.pools) {
          this.set({ pool: name }, pool.waitingCount);
        }
      },
    });
    // The queue's depth is one query per scrape, shared by the two gauges below.
    let depths: Promise<QueueDepth[]> | undefined;
    const readDepths = (): Promise<QueueDepth[]> => {
      depths ??= (sources.queueDepths?.() ?? Promise.resolve([])).finally(() => {
        depths = undefined;
      });
      return depths;
    };
    new Gauge({
      name: 'hearth_job_queue_depth',
      help: 'Jobs by queue and state: waiting (due, not yet taken) and active (running).',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        const rows = await readDepths();
        this.reset();
        for (const row of rows) {
          this.set({ queue: row.queue, state: 'waiting' }, row.waiting);
          this.set({ queue: row.queue, state: 'active' }, row.active);
        }
      },
    });
    new Gauge({
      name: 'hearth_job_queue_oldest_age_seconds',
      help: 'Seconds the oldest waiting job of each queue has been due.',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        const rows = await readDepths();
        this.reset();
        for (const row of rows) {
          this.set({ queue: row.queue }, row.oldestWaitingSeconds);
        }
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** The Prometheus text exposition of every metric. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
