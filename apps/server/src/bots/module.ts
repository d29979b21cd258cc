import type { Config } from '../config/schema.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundPolicy } from '../platform/outbound-http.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { Repository } from '../storage/repository.js';
import type { SearchService } from '../search/service.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { MemberRepositories } from '../jobs/actor.js';
import type { AsyncJobs } from '../jobs/async-job.js';
import type { AuditWriter } from './audit.js';
import { registerBotOperations } from './operations.js';
import { BotRunner } from './runner.js';
import { BotSandbox } from './sandbox.js';
import type { Telemetry } from '../observability/telemetry.js';

export interface BotModuleDeps {
  config: Config;
  logger: Logger;
  members: MemberRepositories;
  systemRepo: (projectId?: string) => Repository;
  binaryStore: BinaryStore;
  search: SearchService;
  outbound: OutboundPolicy;
  asyncJobs: AsyncJobs;
  audits: AuditWriter;
  telemetry?: Telemetry;
}

export interface BotModule {
  runner: BotRunner;
  registerOperations(registry: OperationRegistry): void;
  close(): void;
}

/** Bots: the sandbox, the runner, and the $deploy/$execute operations. */
export function createBotModule(deps: BotModuleDeps): BotModule {
  const sandbox = new BotSandbox({
    memoryLimitMb: deps.config.botMemoryLimitMb,
    warmIsolates: deps.config.botWarmIsolates,
  });
  const runner = new BotRunner({
    sandbox,
    members: deps.members,
    systemRepo: deps.systemRepo,
    binaryStore: deps.binaryStore,
    search: deps.search,
    outbound: deps.outbound,
    config: deps.config,
    logger: deps.logger,
    audits: deps.audits,
    telemetry: deps.telemetry ?? {},
  });
  return {
    runner,
    registerOperations(registry) {
      registerBotOperations(registry, {
        runner,
        systemRepo: deps.systemRepo,
        binaryStore: deps.binaryStore,
        asyncJobs: deps.asyncJobs,
      });
    },
    close() {
      sandbox.dispose();
    },
  };
}
