import type { Config } from '../config/schema.js';
import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import { OutboundPolicy } from '../platform/outbound-http.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { Repository } from '../storage/repository.js';
import type { RepositoryDeps } from '../storage/types.js';
import type { WriteSubscriptions } from '../storage/write-events.js';
import type { ChangeNotices } from '../storage/change-notices.js';
import type { SearchModule } from '../search/service.js';
import type { OperationRegistry } from '../operations/registry.js';
import { createBotModule, type BotModule } from '../bots/module.js';
import { AuditWriter } from '../bots/audit.js';
import { createSubscriptionModule, type SubscriptionModule } from '../subscriptions/module.js';
import type { Mailer } from '../subscriptions/deliver.js';
import { memberRepositories, type MemberRepositories, type MemberScopeBuilder } from '../jobs/actor.js';
import { JobQueue } from '../jobs/queue.js';
import { AsyncJobs } from '../jobs/async-job.js';
import type { Telemetry } from '../observability/telemetry.js';

export interface AutomationDeps {
  config: Config;
  pool: Pool;
  logger: Logger;
  repositoryDeps: RepositoryDeps;
  systemRepo: (projectId?: string) => Repository;
  search: SearchModule;
  binaryStore: BinaryStore;
  operations: OperationRegistry;
  writes: WriteSubscriptions;
  /** Writes that process-local caches depend on, from every process (storage/change-notices.ts). */
  notices: ChangeNotices;
  /** auth/: the access scope of a membership (policies, linked projects); without it, own project only. */
  memberScope?: MemberScopeBuilder;
  /** auth/: the SMTP mailer, for email subscriptions. */
  mailer?: Mailer;
  /** Queues other modules run in the background (the audit trail's retention), defined before the queue starts. */
  defineJobs?: (jobs: JobQueue, subscriptions: SubscriptionModule) => void;
  /** Spans and metrics of jobs, bot runs and deliveries (observability/). */
  telemetry?: Telemetry;
}

/** Background jobs, bots and subscriptions, built and started together (services.ts). */
export interface Automation {
  jobs: JobQueue;
  /** Long operations answered 202 and polled (Prefer: respond-async). */
  asyncJobs: AsyncJobs;
  bots: BotModule;
  subscriptions: SubscriptionModule;
  members: MemberRepositories;
  outbound: OutboundPolicy;
  /** Graceful stop: running jobs finish (up to the shutdown timeout), isolates are freed. */
  stop(): Promise<void>;
}

export async function createAutomation(deps: AutomationDeps): Promise<Automation> {
  const { config, logger } = deps;
  const jobs = new JobQueue({
    pool: deps.pool,
    logger,
    workersEnabled: config.workersEnabled,
    concurrency: config.workerConcurrency,
    pollingIntervalMs: config.jobPollingIntervalMs,
    retryDelaySeconds: config.jobRetryDelaySeconds,
    leaseSeconds: config.jobLeaseSeconds,
    telemetry: deps.telemetry,
  });
  const outbound = new OutboundPolicy(config.outboundAllowList, { tracer: deps.telemetry?.tracer });
  const members = memberRepositories(deps.repositoryDeps, deps.pool, deps.memberScope);
  const asyncJobs = new AsyncJobs({ jobs, systemRepo: deps.systemRepo, members, logger });
  const audits = new AuditWriter(deps.systemRepo, logger);
  const bots = createBotModule({
    config,
    logger,
    members,
    systemRepo: deps.systemRepo,
    binaryStore: deps.binaryStore,
    search: deps.search.service,
    outbound,
    asyncJobs,
    audits,
    telemetry: deps.telemetry,
  });
  bots.registerOperations(deps.operations);
  const subscriptions = createSubscriptionModule({
    config,
    pool: deps.pool,
    logger,
    jobs,
    matcher: deps.repositoryDeps.matcher,
    indexer: deps.repositoryDeps.indexer,
    registry: deps.search.registry,
    systemRepo: deps.systemRepo,
    members,
    outbound,
    bots: bots.runner,
    mailer: deps.mailer,
    audits,
    writes: deps.writes,
    notices: deps.notices,
    telemetry: deps.telemetry,
  });
  // Cached scopes and secrets are dropped when what they were read from changes: at once in this
  // process (the listener below), and in every other when it hears of the write (change notices).
  deps.notices.on(['ProjectMembership', 'AccessPolicy', 'Project'], () => members.invalidate());
  deps.notices.on(['Project'], () => bots.runner.invalidate());
  deps.writes.subscribe((events) => {
    const types = new Set(events.map((e) => e.version.resourceType));
    if (types.has('ProjectMembership') || types.has('AccessPolicy') || types.has('Project')) {
      members.invalidate();
    }
    if (types.has('Project')) {
      bots.runner.invalidate();
    }
  });
  subscriptions.registerOperations(deps.operations);
  // A project's new SearchParameter: its existing resources are reindexed as a job.
  deps.writes.subscribe(deps.search.useJobQueue(jobs, logger));
  await subscriptions.start();
  deps.defineJobs?.(jobs, subscriptions);
  await jobs.start();
  // Recovery queues evaluation jobs: their queue exists from jobs.start() on.
  await subscriptions.startHeartbeat();
  let stopped = false;
  return {
    jobs,
    asyncJobs,
    bots,
    subscriptions,
    members,
    outbound,
    async stop() {
      if (stopped) {
        return;
      }
      stopped = true;
      await subscriptions.stop();
      await jobs.stop(config.shutdownTimeoutMs);
      await audits.flush();
      bots.close();
      await jobs.close();
    },
  };
}
