import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { Repository } from '../storage/repository.js';
import type { Broadcaster } from '../subscriptions/broadcast.js';
import type { BotRunner } from '../bots/runner.js';
import type { BinaryStore } from '../storage/binary-store.js';
import { AgentHub } from './hub.js';
import { registerAgentOperations } from './operations.js';
import { AgentStore } from './store.js';

export interface AgentModuleDeps {
  pool: Pool;
  logger: Logger;
  runner: BotRunner;
  broadcaster: Broadcaster;
  repoForToken(token: string): Promise<Repository>;
  binaryStore: BinaryStore;
}

/** The on-premises agents' hub (/ws/agent) and their operations. */
export interface AgentModule {
  hub: AgentHub;
  registerOperations(registry: OperationRegistry): void;
  stop(): Promise<void>;
}

export function createAgentModule(deps: AgentModuleDeps): AgentModule {
  const store = new AgentStore(deps.pool);
  const hub = new AgentHub({ store, ...deps });
  return {
    hub,
    registerOperations: (registry) => registerAgentOperations(registry, hub, store),
    stop: () => hub.close(),
  };
}
