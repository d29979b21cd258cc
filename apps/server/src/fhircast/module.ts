import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import { EndpointTokens } from './endpoints.js';
import { FhircastHub, type MessageBus } from './hub.js';
import { FhircastService } from './service.js';
import { FhircastStore } from './store.js';

export interface FhircastModuleDeps {
  pool: Pool;
  logger: Logger;
  broadcaster: MessageBus;
  baseUrl: string;
  ackTimeoutMs: number;
}

/** The FHIRcast hub: its requests (service) and its websocket subscribers on this process (hub). */
export interface FhircastModule {
  service: FhircastService;
  hub: FhircastHub;
  stop(): void;
}

export function createFhircastModule(deps: FhircastModuleDeps): FhircastModule {
  const tokens = new EndpointTokens(deps.pool);
  const store = new FhircastStore(deps.pool);
  const hub = new FhircastHub({
    tokens,
    store,
    broadcaster: deps.broadcaster,
    logger: deps.logger,
    ackTimeoutMs: deps.ackTimeoutMs,
  });
  const service = new FhircastService({ baseUrl: deps.baseUrl, tokens, store, hub });
  return { service, hub, stop: () => hub.close() };
}
