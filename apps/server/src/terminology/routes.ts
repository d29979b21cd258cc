import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FhirContextFactory } from '../fhir/context-factory.js';
import type { OperationDefinitionEntry } from '../fhir/operations/registry.js';
import { STREAMED_IMPORT_TYPES } from './operations/import.js';

/**
 * Routes for CodeSystem/$import with a streamed body. Registered beside the FHIR plugin under the
 * same prefix; the static paths win over the FHIR plugin's `/:resourceType/:id/:op` routes. Only
 * here do NDJSON / CSV / TSV bodies arrive as a stream, so a large release is never held in memory
 * and is not bound by the JSON body limit.
 */
export async function terminologyRoutes(
  app: FastifyInstance,
  opts: { contextFor: FhirContextFactory; importOperation: OperationDefinitionEntry },
): Promise<void> {
  app.addContentTypeParser(STREAMED_IMPORT_TYPES, (_request, payload, done) => done(null, payload));
  if (!app.hasRequestDecorator('fhir')) {
    app.decorateRequest('fhir', null as never);
  }
  app.addHook('preHandler', async (request) => {
    request.fhir = await opts.contextFor(request);
  });
  const handler = opts.importOperation.handler;
  app.post('/CodeSystem/$import', (request, reply) => handler(request, reply, { resourceType: 'CodeSystem' }));
  app.post('/CodeSystem/:id/$import', (request: FastifyRequest<{ Params: { id: string } }>, reply) =>
    handler(request, reply, { resourceType: 'CodeSystem', id: request.params.id }),
  );
}
