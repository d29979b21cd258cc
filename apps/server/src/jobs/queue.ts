import PgBoss from 'pg-boss';
import type { Logger } from '../platform/logger.js';
import {
  genericPlanPool,
  PG_DEADLOCK,
  pgErrorCode,
  preparedName,
  retryWhileUnreachable,
  type Pool,
} from '../platform/postgres.js';
import { JOB_SCHEMA } from '../storage/migrations/0300-job-queue.js';
import { ATTR, inSpan, type Telemetry } from '../observability/telemetry.js';
import type { QueueDepth } from '../observability/metrics.js';
import { instrumentPool } from '../observability/pool.js';

/** What a handler knows about the attempt it runs. */
export interface JobAttempt {
  id: string;
  queue: string;
  /** 0 on the first attempt. */
  retryCount: number;
  /** Retries allowed after the first attempt. */
  retryLimit: number;
  /**
   * The attempt is recorded (completed or failed) only once `work` has settled, although the
   * worker moves on to the next job when the handler returns: writes the handler left batched
   * (its AuditEvents) are then never lost with a completed job. Absent outside a queue's worker.
   */
  completeAfter?(work: Promise<unknown>): void;
}

export interface JobDefinition<T> {
  /** Queue name: letters, digits, '-', '_', '.', '/'. */
  name: string;
  /** Runs one job. A throw fails this attempt; pg-boss retries it later while retries remain. */
  handler: (data: T, attempt: JobAttempt) => Promise<unknown>;
  /** Retries after the first attempt (default 3). */
  retryLimit?: number;
  /** Delay before the first retry, in seconds (default: config jobRetryDelaySeconds); doubled each time. */
  retryDelaySeconds?: number;
  /**
   * Longest one attempt may run, however alive its process (default 15 minutes); past it the
   * attempt counts as lost and is retried. A process that dies loses its attempts sooner: see
   * JobQueueOptions.leaseSeconds.
   */
  expireInSeconds?: number;
  /** Jobs of this queue run at once in this process (default: config workerConcurrency). */
  concurrency?: number;
}

export interface SendOptions {
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** Not before this time. */
  startAfter?: Date;
  /** At most one queued job per key (jobs still waiting to start). */
  singletonKey?: string;
}

export interface JobQueueOptions {
  pool: Pool;
  logger: Logger;
  /** Run workers in this process; without, the process only queues jobs. */
  workersEnabled: boolean;
  concurrency: number;
  pollingIntervalMs: number;
  retryDelaySeconds: number;
  /**
   * How long an attempt stays with the process that took it without word from that process
   * (default 30 s). The process renews the lease of each attempt it runs every third of it, so an
   * attempt outlives its lease only while its process is alive (up to its queue's expireInSeconds);
   * the attempts of a process that died are failed, and so retried elsewhere, a lease later.
   */
  leaseSeconds?: number;
  /**
   * How often lost attempts (their lease or expireInSeconds ran out) are looked for and failed, so
   * they are retried (default half a lease, at most 60 s; one process does it per interval,
   * whichever gets there first).
   */
  maintenanceIntervalSeconds?: number;
  /** A span per attempt, its duration by queue and outcome, the queues' depth at each scrape. */
  telemetry?: Telemetry;
}

/** Default JobQueueOptions.leaseSeconds. */
export const DEFAULT_LEASE_SECONDS = 30;

/**
 * The durable job queue: pg-boss on the application's own PostgreSQL pool, so a single
 * PostgreSQL is all Hearth needs. Jobs live in tables (they survive restarts), failed attempts are
 * retried with exponential backoff and jitter, an attempt whose process died expires and runs
 * again, and every process with workers enabled takes jobs with SELECT ... FOR UPDATE SKIP LOCKED.
 *
 * Each queue has one fetch loop per process that keeps up to `concurrency` jobs running and
 * completes or fails each one on its own (a slow job never holds back the others). Jobs queued in
 * this process wake the loop at once; jobs queued elsewhere are found by polling.
 */
/**
 * Runs pg-boss's SQL. Its statements with parameters (fetch, send, complete: a few fixed texts)
 * run as prepared statements on connections that plan them once, generically: sent unnamed, their
 * parse and plan cost more than their execution (0.47 of 0.61 ms per fetch, measured in the
 * statement log of a firing subscription), and even prepared, PostgreSQL kept re-planning the
 * fetch at each run (0.36 ms) where its generic plan (partition pruned at run time, the fetch
 * index) runs in 0.04 ms. Texts without parameters (migrations, several statements in one) keep
 * the simple protocol.
 */
function runQueueSql(pool: Pool, text: string, values: unknown[] | undefined) {
  return values && values.length > 0
    ? pool.query({ name: preparedName('hearth_boss', text), text, values })
    : pool.query(text, values);
}

/** Connections of the queue's own pool: fetch, send and complete are short statements. */
const QUEUE_CONNECTIONS = 4;

export class JobQueue {
  private readonly boss: PgBoss;
  /** pg-boss's own connections, with generic plans (see runQueueSql). */
  private readonly queuePool: Pool;
  private readonly options: JobQueueOptions;
  private readonly definitions = new Map<string, JobDefinition<unknown>>();
  private readonly loops = new Map<string, FetchLoop>();
  private started = false;
  private stopping = false;
  private readonly leaseSeconds: number;
  private renewTimer?: NodeJS.Timeout;
  private renewalStopped = false;
  private renewing?: Promise<void>;

  constructor(options: JobQueueOptions) {
    this.options = options;
    this.leaseSeconds = Math.max(1, options.leaseSeconds ?? DEFAULT_LEASE_SECONDS);
    this.queuePool = genericPlanPool(options.pool, QUEUE_CONNECTIONS);
    if (options.telemetry) {
      instrumentPool(this.queuePool, 'jobs', options.telemetry);
      if (options.telemetry.metrics) {
        options.telemetry.metrics.sources.queueDepths = () => this.depths();
      }
    }
    this.boss = new PgBoss({
      db: { executeSql: (text: string, values: unknown[]) => runQueueSql(this.queuePool, text, values) },
      schema: JOB_SCHEMA,
      // Cron scheduling is not used; maintenance (expiring lost attempts, archiving) runs everywhere.
      schedule: false,
      supervise: true,
      migrate: true,
      maintenanceIntervalSeconds:
        options.maintenanceIntervalSeconds ?? Math.min(60, Math.max(1, Math.ceil(this.leaseSeconds / 2))),
      // Finished jobs are history only: kept briefly, so busy queues stay small.
      archiveCompletedAfterSeconds: 900,
      deleteAfterDays: 2,
    });
    this.boss.on('error', (err: Error) => options.logger.warn({ err }, 'job queue error'));
  }

  /** Declares a queue and its handler; call before start(). */
  define<T>(definition: JobDefinition<T>): void {
    if (this.started) {
      throw new Error(`Job queue ${definition.name} must be defined before the queue starts`);
    }
    this.definitions.set(definition.name, definition as JobDefinition<unknown>);
  }

  get workersEnabled(): boolean {
    return this.options.workersEnabled;
  }

  async start(): Promise<void> {
    if (this.started) {
      return;
    }
    this.started = true;
    await this.boss.start();
    for (const definition of this.definitions.values()) {
      await this.ensureQueue(definition.name);
    }
    if (this.options.workersEnabled) {
      for (const definition of this.definitions.values()) {
        const loop = new FetchLoop(this.boss, definition, {
          concurrency: definition.concurrency ?? this.options.concurrency,
          pollingIntervalMs: Math.max(500, this.options.pollingIntervalMs),
          logger: this.options.logger,
          telemetry: this.options.telemetry ?? {},
        });
        this.loops.set(definition.name, loop);
        loop.start();
      }
      this.scheduleRenewal();
    }
  }

  /** Renews the leases of this process's running attempts every third of a lease. */
  private scheduleRenewal(): void {
    this.renewTimer = setTimeout(
      () => {
        this.renewing = this.renewLeases()
          .catch((err: unknown) => this.options.logger.warn({ err }, 'could not renew the leases of running jobs'))
          .finally(() => {
            this.renewing = undefined;
            if (!this.renewalStopped) {
              this.scheduleRenewal();
            }
          });
      },
      (this.leaseSeconds * 1000) / 3,
    );
    this.renewTimer.unref();
  }

  /**
   * One statement per queue with attempts running here: each attempt's expiry moves to a lease
   * from now, never past its queue's expireInSeconds from its start (pg-boss fails an active job
   * once started_on + expire_in has passed).
   */
  private async renewLeases(): Promise<void> {
    for (const [name, loop] of this.loops) {
      const ids = loop.activeIds();
      if (ids.length === 0) {
        continue;
      }
      await runQueueSql(
        this.queuePool,
        `UPDATE ${JOB_SCHEMA}.job
            SET expire_in = least(make_interval(secs => $3), now() - started_on + make_interval(secs => $4))
          WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active'`,
        [name, ids, this.maxRunSeconds(name), this.leaseSeconds],
      );
    }
  }

  private maxRunSeconds(name: string): number {
    return this.definitions.get(name)?.expireInSeconds ?? 15 * 60;
  }

  /**
   * Creates a queue unless it exists. Creating one attaches a partition to the job table, so
   * processes starting together can deadlock each other; PostgreSQL then aborts one, which tries again.
   */
  private async ensureQueue(name: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        if (!(await this.boss.getQueue(name))) {
          await this.boss.createQueue(name, { name, policy: 'standard' });
        }
        return;
      } catch (err) {
        if (pgErrorCode(err) !== PG_DEADLOCK || attempt >= 5) {
          throw err;
        }
        await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt * (1 + Math.random())));
      }
    }
  }

  private jobOptions(name: string, options: SendOptions = {}): PgBoss.SendOptions {
    const definition = this.definitions.get(name);
    if (!definition) {
      throw new Error(`Unknown job queue ${name}`);
    }
    return {
      retryLimit: options.retryLimit ?? definition.retryLimit ?? 3,
      retryDelay: options.retryDelaySeconds ?? definition.retryDelaySeconds ?? this.options.retryDelaySeconds,
      retryBackoff: true,
      // A lease, renewed while the attempt runs (renewLeases); a retried job carries the expiry
      // its last attempt reached until its next attempt's first renewal.
      expireInSeconds: Math.min(this.leaseSeconds, this.maxRunSeconds(name)),
      ...(options.startAfter ? { startAfter: options.startAfter } : {}),
      ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
    };
  }

  /** Queues one job; returns its id (null when a singleton job of that key is already queued). */
  async send<T extends object>(name: string, data: T, options?: SendOptions): Promise<string | null> {
    const id = await this.boss.send(name, data, this.jobOptions(name, options));
    this.loops.get(name)?.wake();
    return id;
  }

  /** Queues many jobs of one queue in one statement. */
  async sendMany<T extends object>(name: string, items: { data: T; options?: SendOptions }[]): Promise<void> {
    if (items.length === 0) {
      return;
    }
    await this.boss.insert(
      items.map((item) => {
        const o = this.jobOptions(name, item.options);
        return {
          name,
          data: item.data,
          retryLimit: o.retryLimit,
          retryDelay: o.retryDelay,
          retryBackoff: o.retryBackoff,
          expireInSeconds: o.expireInSeconds,
          ...(item.options?.startAfter ? { startAfter: item.options.startAfter } : {}),
          ...(item.options?.singletonKey ? { singletonKey: item.options.singletonKey } : {}),
        };
      }),
    );
    this.loops.get(name)?.wake();
  }

  /**
   * Closes the queue's own connections, after stop(): attempts still running then can settle
   * nothing (as when the process dies), and are retried elsewhere once they expire.
   */
  async close(): Promise<void> {
    await this.queuePool.end();
  }

  /**
   * Each queue's jobs waiting (created or to be retried, and due) and running, with the age of the
   * oldest due one: one statement over the job table (its partitions are per queue).
   */
  async depths(): Promise<QueueDepth[]> {
    const { rows } = await this.queuePool.query<{
      name: string;
      waiting: number;
      active: number;
      oldest: number | null;
    }>(
      `SELECT name,
              count(*) FILTER (WHERE state IN ('created', 'retry') AND start_after <= now()) AS waiting,
              count(*) FILTER (WHERE state = 'active') AS active,
              extract(epoch FROM now() - min(start_after) FILTER (WHERE state IN ('created', 'retry') AND start_after <= now()))::float8 AS oldest
         FROM ${JOB_SCHEMA}.job
        WHERE state IN ('created', 'retry', 'active')
        GROUP BY name`,
    );
    const byName = new Map(rows.map((row) => [row.name, row]));
    return [...this.definitions.keys()].map((queue) => {
      const row = byName.get(queue);
      return {
        queue,
        waiting: Number(row?.waiting ?? 0),
        active: Number(row?.active ?? 0),
        oldestWaitingSeconds: Math.max(0, row?.oldest ?? 0),
      };
    });
  }

  /** A job's state, for tests and status pages. */
  async getJob(name: string, id: string): Promise<PgBoss.JobWithMetadata | null> {
    return this.boss.getJobById(name, id, { includeArchive: true });
  }

  /** Cancels a queued or running job (a running attempt still finishes, but is not retried). */
  async cancel(name: string, id: string): Promise<void> {
    await this.boss.cancel(name, id);
  }

  /**
   * Graceful stop: no new jobs are taken; running ones get until `timeoutMs` to finish. Jobs still
   * running after that stay active in the database and are retried once their attempt expires.
   */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (!this.started || this.stopping) {
      return;
    }
    this.stopping = true;
    const loops = [...this.loops.values()];
    await Promise.all(loops.map((loop) => loop.stop(timeoutMs)));
    // Leases are renewed while running attempts get their time to finish; those still running
    // after it keep their lease only until it runs out (then another process runs them).
    this.renewalStopped = true;
    clearTimeout(this.renewTimer);
    await this.renewing;
    await this.boss.stop({ graceful: false, close: false, wait: true, timeout: Math.max(1000, timeoutMs) });
  }
}

interface LoopOptions {
  concurrency: number;
  pollingIntervalMs: number;
  logger: Logger;
  telemetry: Telemetry;
}

/** Keeps up to `concurrency` jobs of one queue running; each is completed or failed on its own. */
class FetchLoop {
  private running = 0;
  /** Attempts taken and not yet recorded, whose leases this process renews. */
  private readonly active = new Set<string>();
  private stopped = false;
  private wakeUp?: () => void;
  private woken = false;
  private readonly idle = new Set<() => void>();
  private completions: string[] = [];
  private completionTimer?: NodeJS.Timeout;
  private readonly completing = new Set<Promise<void>>();
  /** Attempts whose handler returned, recorded once what they wait for (completeAfter) has settled. */
  private readonly deferred = new Set<Promise<void>>();
  private done?: Promise<void>;
  /** Set by stop(): recording outcomes is no longer retried after this time. */
  private giveUpAt?: number;

  constructor(
    private readonly boss: PgBoss,
    private readonly definition: JobDefinition<unknown>,
    private readonly options: LoopOptions,
  ) {}

  start(): void {
    this.done = this.loop();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  activeIds(): string[] {
    return [...this.active];
  }

  private async loop(): Promise<void> {
    const { name } = this.definition;
    while (!this.stopped) {
      const free = this.options.concurrency - this.running;
      let fetched = 0;
      if (free > 0) {
        this.woken = false;
        try {
          const jobs = await this.boss.fetch<unknown>(name, { batchSize: free, includeMetadata: true });
          fetched = jobs.length;
          for (const job of jobs) {
            void this.run(job);
          }
        } catch (err) {
          this.options.logger.warn({ err, queue: name }, 'fetching jobs failed');
        }
      }
      if (this.stopped) {
        break;
      }
      // More may be waiting when a full batch came back and slots are left; otherwise wait.
      if (fetched > 0 && fetched === free && this.running < this.options.concurrency) {
        continue;
      }
      if (this.woken && this.running < this.options.concurrency) {
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.options.pollingIntervalMs);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = done;
      });
      this.wakeUp = undefined;
    }
  }

  private async run(job: PgBoss.JobWithMetadata<unknown>): Promise<void> {
    const { name, handler } = this.definition;
    this.running++;
    this.active.add(job.id);
    const awaited: Promise<unknown>[] = [];
    const fail = (err: unknown): Promise<void> => {
      const message = err instanceof Error ? err.message : String(err);
      if (job.retryCount >= job.retryLimit) {
        this.options.logger.warn({ queue: name, jobId: job.id, err: message }, 'job failed; no retries left');
      }
      return this.persist(() => this.boss.fail(name, job.id, { message })).then(
        () => undefined,
        (failErr: unknown) => {
          this.options.logger.warn({ err: failErr, queue: name, jobId: job.id }, 'could not record a failed job');
        },
      );
    };
    let record: () => Promise<void>;
    const { tracer, metrics } = this.options.telemetry;
    const started = metrics ? performance.now() : 0;
    try {
      const attempt: JobAttempt = {
        id: job.id,
        queue: name,
        retryCount: job.retryCount,
        retryLimit: job.retryLimit,
        completeAfter: (work) => awaited.push(work),
      };
      const output = await inSpan(
        tracer,
        `job ${name}`,
        { [ATTR.queue]: name, [ATTR.jobId]: job.id, [ATTR.attempt]: job.retryCount + 1 },
        () => handler(job.data, attempt),
      );
      metrics?.jobDuration.observe({ queue: name, outcome: 'completed' }, (performance.now() - started) / 1000);
      const data = toOutput(output);
      record = data
        ? () => this.persist(() => this.boss.complete(name, job.id, data)).catch(fail)
        : () => this.completeSoon(job.id);
    } catch (err) {
      metrics?.jobDuration.observe({ queue: name, outcome: 'failed' }, (performance.now() - started) / 1000);
      record = () => fail(err);
    }
    try {
      if (awaited.length === 0) {
        await record().finally(() => this.active.delete(job.id));
      } else {
        // The worker is free already; the attempt is recorded once what it waits for has settled.
        const deferred = Promise.allSettled(awaited).then(record);
        this.deferred.add(deferred);
        void deferred.finally(() => {
          this.deferred.delete(deferred);
          this.active.delete(job.id);
        });
      }
    } finally {
      this.running--;
      this.wake();
      if (this.running === 0) {
        for (const resolve of this.idle) {
          resolve();
        }
        this.idle.clear();
      }
    }
  }

  /**
   * Jobs that finish without output are completed together: one statement for the jobs that end
   * within a few milliseconds of each other (a busy queue would otherwise spend a statement each).
   */
  private completeSoon(id: string): Promise<void> {
    this.completions.push(id);
    if (this.completions.length >= 100) {
      return this.flushCompletions();
    }
    this.completionTimer ??= setTimeout(() => void this.flushCompletions(), 5);
    return Promise.resolve();
  }

  private async flushCompletions(): Promise<void> {
    clearTimeout(this.completionTimer);
    this.completionTimer = undefined;
    const ids = this.completions.splice(0);
    if (ids.length === 0) {
      return;
    }
    const done = this.persist(() => this.boss.complete(this.definition.name, ids)).then(
      () => undefined,
      (err: unknown) => {
        this.options.logger.warn({ err, queue: this.definition.name }, 'could not record completed jobs');
      },
    );
    this.completing.add(done);
    void done.finally(() => this.completing.delete(done));
    await done;
  }

  /**
   * Records attempts' outcomes, again while PostgreSQL cannot be reached (a restart): an outcome
   * left unrecorded keeps the job active until it expires (15 minutes by default), so a completed
   * job would run a second time then, and a failed one would wait that long for its retry. Gives up
   * once a stop's time is up (the job then expires and runs again, as after a crash).
   */
  private async persist(statement: () => Promise<unknown>): Promise<void> {
    await retryWhileUnreachable(statement, () => this.giveUpAt !== undefined && Date.now() > this.giveUpAt);
  }

  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    this.giveUpAt = Date.now() + timeoutMs;
    this.wakeUp?.();
    await this.done;
    if (this.running > 0) {
      await Promise.race([
        new Promise<void>((resolve) => this.idle.add(resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
      ]);
    }
    await Promise.race([
      Promise.all([...this.deferred]),
      new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
    ]);
    await this.flushCompletions();
    await Promise.all([...this.completing]);
  }
}

function toOutput(value: unknown): object | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  return typeof value === 'object' && !Array.isArray(value) ? (value as object) : { value };
}
