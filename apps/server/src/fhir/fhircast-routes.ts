import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, fail } from '@hearth/core';
import type { Authenticator } from '../auth/authenticate.js';
import type { FhircastModule } from '../fhircast/module.js';
import type { FhircastCaller } from '../fhircast/scopes.js';
import { formPairs } from '../http/body.js';

export interface FhircastPluginOptions {
  fhircast: FhircastModule;
  authenticator: Authenticator;
}

type TopicRequest = FastifyRequest<{ Params: { topic: string } }>;

/**
 * The FHIRcast hub over HTTP (docs/fhircast.md), also under /api: discovery, subscriptions
 * (form-encoded POST /fhircast), events (POST /fhircast/{topic}, or POST /fhircast with a JSON
 * event), the current context (GET /fhircast/{topic}) and the subscribers' websockets
 * (/ws/fhircast/{endpoint}, which the endpoint URL itself authorises). Needs @fastify/websocket.
 */
export async function fhircastPlugin(app: FastifyInstance, options: FhircastPluginOptions): Promise<void> {
  const { fhircast, authenticator } = options;
  const service = fhircast.service;

  const callerOf = async (request: FastifyRequest): Promise<FhircastCaller> => {
    const auth = await authenticator.require(request);
    return {
      projectId: auth.project.id as string,
      profile: auth.profile.reference as string,
      scope: auth.scope,
      firstParty: !auth.login.client,
    };
  };

  for (const prefix of ['', '/api']) {
    for (const base of [prefix, `${prefix}/fhircast`, `${prefix}/fhir/R4`]) {
      app.get(`${base}/.well-known/fhircast-configuration`, async () => service.configuration());
    }
    app.post(`${prefix}/fhircast`, async (request, reply) => {
      const caller = await callerOf(request);
      if (formPairs(request.body)) {
        return reply.code(202).send(await service.subscription(caller, request.body as Record<string, unknown>));
      }
      if (request.body && typeof request.body === 'object' && !Buffer.isBuffer(request.body)) {
        await service.publish(caller, request.body);
        return reply.code(202).send();
      }
      fail(
        badRequest(
          'POST /fhircast takes a subscription (application/x-www-form-urlencoded) or an event (application/json)',
        ),
      );
    });
    app.post(`${prefix}/fhircast/:topic`, async (request: TopicRequest, reply) => {
      const caller = await callerOf(request);
      if (
        !request.body ||
        typeof request.body !== 'object' ||
        Buffer.isBuffer(request.body) ||
        formPairs(request.body)
      ) {
        fail(badRequest('Send the event as JSON (Content-Type: application/json)'));
      }
      await service.publish(caller, request.body, request.params.topic);
      return reply.code(202).send();
    });
    app.get(`${prefix}/fhircast/:topic`, async (request: TopicRequest) => {
      return service.current(await callerOf(request), request.params.topic);
    });
    app.get(`${prefix}/ws/fhircast/:endpoint`, { websocket: true }, (socket, request) => {
      fhircast.hub.accept(socket, (request.params as { endpoint: string }).endpoint);
    });
  }
  app.addHook('preClose', async () => {
    fhircast.stop();
  });
}
