import type { Config } from '../config/schema.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundPolicy } from '../platform/outbound-http.js';
import type { Pool } from '../platform/postgres.js';
import type { Repository } from '../storage/repository.js';
import type { ConditionalMatcher, SearchIndexer } from '../storage/types.js';
import type { WriteSubscriptions } from '../storage/write-events.js';
import { publishAfterCommit, type ChangeNotices } from '../storage/change-notices.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { JobQueue } from '../jobs/queue.js';
import type { MemberRepositories } from '../jobs/actor.js';
import type { BotRunner } from '../bots/runner.js';
import type { AuditWriter } from '../bots/audit.js';
import { ActiveSubscriptions } from './active.js';
import { PgBroadcaster, type Broadcaster } from './broadcast.js';
import { RedisBroadcaster } from './redis-broadcast.js';
import { deliver, type DeliveryDeps, type Mailer } from './deliver.js';
import { deliverFirstAttempts } from './first-attempt.js';
import { DELIVER_QUEUE, EVALUATE_QUEUE, evaluateChanges, type DeliveryJob, type EvaluationJob } from './evaluate.js';
import { SubscriptionListener } from './listener.js';
import { ListenerHeartbeat } from './heartbeat.js';
import { CriteriaPretest, type ParamRegistry } from './prefilter.js';
import { registerSubscriptionOperations } from './operations.js';
import { BindingTokens, PING_INTERVAL_MS, WebsocketHub } from './websocket.js';
import { isConnected, WebsocketPresence } from './presence.js';
import type { Telemetry } from '../observability/telemetry.js';

export interface SubscriptionModuleDeps {
  config: Config;
  pool: Pool;
  logger: Logger;
  jobs: JobQueue;
  matcher: ConditionalMatcher;
  indexer: SearchIndexer;
  registry: ParamRegistry;
  systemRepo: (projectId?: string) => Repository;
  members: MemberRepositories;
  outbound: OutboundPolicy;
  bots: BotRunner;
  mailer?: Mailer;
  audits: AuditWriter;
  writes: WriteSubscriptions;
  /** Writes that process-local caches depend on, heard on this module's message bus. */
  notices: ChangeNotices;
  /** A span per delivery attempt, deliveries counted by channel and outcome. */
  telemetry?: Telemetry;
}

export interface SubscriptionModule {
  hub: WebsocketHub;
  /**
   * True when the profile ("Patient/123") has a subscription websocket bound in the project on any
   * process (presence.ts): what messaging asks before emailing a recipient.
   */
  isConnected(projectId: string, profile: string): Promise<boolean>;
  /** The message bus between server processes (PostgreSQL NOTIFY or Redis), also the agent hub's. */
  broadcaster: Broadcaster;
  registerOperations(registry: OperationRegistry): void;
  start(): Promise<void>;
  /** Beats and recovers dead processes' changes (heartbeat.ts); once the job queue has started. */
  startHeartbeat(): Promise<void>;
  stop(): Promise<void>;
}

/** Binding tokens live as long as an access token by default. */
const TOKEN_TTL_SECONDS = 3600;
/** How long an evaluation job waits for the first attempts it makes (first-attempt.ts). */
const FIRST_ATTEMPT_BUDGET_MS = 1000;

/**
 * R4 criteria subscriptions: a write listener queues evaluation jobs; evaluation makes the first
 * attempt of each rest-hook that fires itself (queuing a delivery job for its retries), queues a
 * delivery job per email or bot subscription that fires, or broadcasts to websockets; and the
 * websocket hub serves /ws/subscriptions-r4 on every process.
 */
export function createSubscriptionModule(deps: SubscriptionModuleDeps): SubscriptionModule {
  const { config, logger } = deps;
  const fhirBase = `${config.baseUrl}fhir/R4/`;
  const active = new ActiveSubscriptions(deps.pool, config.cacheMaxAgeMs);
  // Across processes: Redis publish/subscribe when configured, else PostgreSQL LISTEN/NOTIFY.
  const broadcaster: Broadcaster = config.redisUrl
    ? new RedisBroadcaster(config.redisUrl, logger)
    : new PgBroadcaster(deps.pool, logger);
  // The bus also carries the change notices of every process-local cache (services.ts sends them
  // from the writing transaction on PostgreSQL; Redis hears them after the commit).
  deps.notices.listenTo(broadcaster);
  if (config.redisUrl) {
    deps.writes.subscribe(publishAfterCommit(deps.notices, broadcaster));
  }
  deps.notices.on(['Subscription'], (notice) => active.invalidate(notice.projectId));
  const tokens = new BindingTokens(deps.pool);
  const presence = new WebsocketPresence(deps.pool, logger);
  const hub = new WebsocketHub({
    tokens,
    systemRepo: deps.systemRepo,
    members: deps.members,
    fhirBase,
    logger,
    presence,
  });
  const pretest = new CriteriaPretest(deps.registry, deps.pool);
  const listener = new SubscriptionListener(
    active,
    pretest,
    deps.jobs,
    broadcaster,
    logger,
    config.subscriptionBatchWindowMs,
  );
  deps.writes.subscribe(listener.onWrite);
  // Changes heard but not yet queued when a process dies are re-queued by another (heartbeat.ts).
  const heartbeat = new ListenerHeartbeat({
    db: deps.pool,
    active,
    listener,
    logger,
    intervalMs: config.subscriptionHeartbeatMs,
  });

  broadcaster.onMessage((message) => {
    if (message.k === 'invalidate' && typeof message.p === 'string') {
      active.invalidate(message.p);
    } else if (message.k === 'ws') {
      void hub.onBroadcast(message);
    }
  });

  const deliveryDeps: DeliveryDeps = {
    active,
    systemRepo: deps.systemRepo,
    members: deps.members,
    outbound: deps.outbound,
    outboundTimeoutMs: config.outboundTimeoutMs,
    bots: deps.bots,
    mailer: deps.mailer,
    fhirBase,
    logger,
    audits: deps.audits,
    telemetry: deps.telemetry ?? {},
  };
  // Delivery attempts are lost with their process a minute past their request or bot time limit.
  const deliveryExpirySeconds = Math.ceil(Math.max(config.outboundTimeoutMs, config.botTimeoutMs) / 1000) + 60;
  const firstAttempt = {
    delivery: deliveryDeps,
    jobs: deps.jobs,
    retryDelaySeconds: config.jobRetryDelaySeconds,
    budgetMs: FIRST_ATTEMPT_BUDGET_MS,
    // The attempt's request has ended by then (its time limit), unless its process died.
    fallbackAfterMs: config.outboundTimeoutMs + 10_000,
    logger,
  };

  deps.jobs.define<EvaluationJob>({
    name: EVALUATE_QUEUE,
    retryLimit: 3,
    // An evaluation is a few queries and first attempts bounded by FIRST_ATTEMPT_BUDGET_MS: one
    // still running after this was lost with its process (its changes are evaluated again).
    expireInSeconds: 300,
    // Evaluation is database work: a few at a time leave the pool to requests.
    concurrency: Math.min(4, config.workerConcurrency),
    handler: (job, attempt) =>
      evaluateChanges(
        {
          active,
          pretest,
          db: deps.pool,
          matcher: deps.matcher,
          indexer: deps.indexer,
          systemRepo: deps.systemRepo,
          members: deps.members,
          jobs: deps.jobs,
          broadcaster,
          defaultMaxAttempts: config.subscriptionMaxAttempts,
          logger,
          deliverFirst: (deliveries) => deliverFirstAttempts(firstAttempt, deliveries),
        },
        job,
      ).then(() => {
        // Recorded done only once the AuditEvents of its first attempts are written (not lost in a crash).
        attempt.completeAfter?.(deps.audits.settled());
      }),
  });
  deps.jobs.define<DeliveryJob>({
    name: DELIVER_QUEUE,
    retryLimit: Math.max(0, config.subscriptionMaxAttempts - 1),
    // One attempt is one request or one bot run, each with its own time limit; an attempt still
    // active a minute past that was lost with its process and is retried elsewhere.
    expireInSeconds: deliveryExpirySeconds,
    handler: async (job, attempt) => {
      try {
        return await deliver(deliveryDeps, job, attempt);
      } finally {
        // The attempt (delivered or failed) is recorded once its AuditEvent is written.
        attempt.completeAfter?.(deps.audits.settled());
      }
    },
  });

  return {
    hub,
    // Refreshed every ping round of the hub (30 s): three missed rounds and a process's rows count as gone.
    isConnected: (projectId, profile) => isConnected(deps.pool, projectId, profile, 3 * PING_INTERVAL_MS),
    broadcaster,
    registerOperations(registry) {
      registerSubscriptionOperations(registry, {
        tokens,
        jobs: deps.jobs,
        baseUrl: config.baseUrl,
        tokenTtlSeconds: TOKEN_TTL_SECONDS,
      });
    },
    async start() {
      await broadcaster.start();
    },
    async startHeartbeat() {
      await heartbeat.start();
    },
    async stop() {
      await heartbeat.stop(() => listener.drain());
      hub.close();
      await presence.settled();
      await broadcaster.stop();
    },
  };
}
