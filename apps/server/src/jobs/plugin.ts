import type { FastifyInstance } from 'fastify';
import type { FhirContextFactory } from '../fhir/context-factory.js';
import type { Automation } from './automation.js';

export interface AutomationPluginOptions {
  automation: Automation;
  contextFor: FhirContextFactory;
}

/** HTTP side of automation; closing the app stops the job workers gracefully. */
export async function automationPlugin(app: FastifyInstance, options: AutomationPluginOptions): Promise<void> {
  app.addHook('onClose', async () => {
    await options.automation.stop();
  });
}
