import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FhirContextFactory } from '../auth/context-factory.js';
import type { Automation } from '../automation/module.js';
import { responseShape } from '../http/fhir-reply.js';
import { assertIdParam } from './context.js';
import { sendOperationResult } from './operation-route.js';

export interface AutomationPluginOptions {
  automation: Automation;
  contextFor: FhirContextFactory;
}

type JobRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * HTTP side of automation, also under /api: the subscriptions websocket (/ws/subscriptions-r4) and
 * the status URL of asynchronous requests (/fhir/R4/job/{id}/status: GET polls, DELETE cancels).
 * Closing the app stops the job workers gracefully. Needs @fastify/websocket registered on the app.
 */
export async function automationPlugin(app: FastifyInstance, options: AutomationPluginOptions): Promise<void> {
  const { automation, contextFor } = options;
  for (const prefix of ['', '/api']) {
    app.get(`${prefix}/ws/subscriptions-r4`, { websocket: true }, (socket) => {
      automation.subscriptions.hub.accept(socket);
    });
    app.get(`${prefix}/fhir/R4/job/:id/status`, async (request: JobRequest, reply) => {
      assertIdParam(request.params.id);
      const { repo } = await contextFor(request);
      const result = await automation.asyncJobs.status(repo, request.params.id);
      return sendOperationResult(reply, result, responseShape(request).pretty);
    });
    app.delete(`${prefix}/fhir/R4/job/:id/status`, async (request: JobRequest, reply) => {
      assertIdParam(request.params.id);
      const { repo } = await contextFor(request);
      return sendOperationResult(reply, await automation.asyncJobs.cancel(repo, request.params.id), false);
    });
  }
  app.addHook('onClose', async () => {
    await automation.stop();
  });
}
