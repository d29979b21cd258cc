import type { FastifyInstance } from 'fastify';
import type { FhirContextFactory } from '../fhir/context-factory.js';
import type { Automation } from './automation.js';

export interface AutomationPluginOptions {
  automation: Automation;
  contextFor: FhirContextFactory;
}

/**
 * HTTP side of automation: the subscriptions websocket (/ws/subscriptions-r4, also under /api);
 * closing the app stops the job workers gracefully. Needs @fastify/websocket registered on the app.
 */
export async function automationPlugin(app: FastifyInstance, options: AutomationPluginOptions): Promise<void> {
  const { automation } = options;
  for (const prefix of ['', '/api']) {
    app.get(`${prefix}/ws/subscriptions-r4`, { websocket: true }, (socket) => {
      automation.subscriptions.hub.accept(socket);
    });
  }
  app.addHook('onClose', async () => {
    await automation.stop();
  });
}
