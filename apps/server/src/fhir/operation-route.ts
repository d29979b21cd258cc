// The HTTP side of FHIR $operations (hl7.org/fhir/R4/operations.html): a request becomes an
// OperationInput, the handler's OperationResult becomes the response. Handlers never see HTTP.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OperationRegistry } from '../operations/registry.js';
import { FHIR_JSON } from '../operations/result.js';
import type { OperationInput, OperationLevel, OperationResult, OperationTarget } from '../operations/types.js';
import { responseShape } from '../http/fhir-reply.js';
import { ctx, rawQuery } from './context.js';

/** Resolves `$name` at the target's level (404/405 from the registry), runs it and sends its result. */
export async function runOperation(
  registry: OperationRegistry,
  request: FastifyRequest,
  reply: FastifyReply,
  name: string,
  target: OperationTarget,
): Promise<FastifyReply> {
  const level: OperationLevel = target.id ? 'instance' : target.resourceType ? 'type' : 'system';
  if (target.resourceType) {
    ctx(request).repo.assertType(target.resourceType);
  }
  const entry = registry.resolve(name, level, request.method, target.resourceType);
  const result = await entry.handler(operationInput(request, target));
  return sendOperationResult(reply, result, responseShape(request).pretty);
}

/** What an operation sees of the request. */
export function operationInput(request: FastifyRequest, target: OperationTarget): OperationInput {
  const context = ctx(request);
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    method: request.method as OperationInput['method'],
    target,
    context,
    query: new URLSearchParams(rawQuery(request)),
    body: request.body,
    headers,
    url: new URL(request.url, context.fhirBase).toString(),
  };
}

/** Status, headers, then the JSON (as FHIR, indented when `pretty`), the body with its type, or nothing. */
export function sendOperationResult(reply: FastifyReply, result: OperationResult, pretty: boolean): FastifyReply {
  reply.code(result.status ?? 200);
  if (result.headers) {
    reply.headers(result.headers);
  }
  if (result.json !== undefined) {
    return reply.header('content-type', FHIR_JSON).send(JSON.stringify(result.json, null, pretty ? 2 : undefined));
  }
  if (result.body !== undefined) {
    if (result.contentType) {
      reply.header('content-type', result.contentType);
    }
    return reply.send(result.body);
  }
  return reply.send();
}

/**
 * Routes for operations that take some media types as a stream (CodeSystem/$import's NDJSON, CSV,
 * TSV): the exact paths of each such operation, in a context of their own where those types reach
 * the handler unread, so a large upload is never held in memory nor bound by the JSON body limit.
 * Their static paths win over the FHIR plugin's parametric ones.
 */
export async function streamedOperationRoutes(app: FastifyInstance, registry: OperationRegistry): Promise<void> {
  const streamed = registry.all().filter((e) => e.streamedTypes?.length && e.methods.includes('POST'));
  if (streamed.length === 0) {
    return;
  }
  app.addContentTypeParser(registry.streamedTypes(), (_request, payload, done) => done(null, payload));
  type P = FastifyRequest<{ Params: { id: string } }>;
  for (const entry of streamed) {
    const op = `$${entry.name}`;
    if (entry.levels.includes('system')) {
      app.post(`/${op}`, (request, reply) => runOperation(registry, request, reply, entry.name, {}));
    }
    for (const resourceType of entry.resourceTypes ?? []) {
      if (entry.levels.includes('type')) {
        app.post(`/${resourceType}/${op}`, (request, reply) =>
          runOperation(registry, request, reply, entry.name, { resourceType }),
        );
      }
      if (entry.levels.includes('instance')) {
        app.post(`/${resourceType}/:id/${op}`, (request: P, reply) =>
          runOperation(registry, request, reply, entry.name, { resourceType, id: request.params.id }),
        );
      }
    }
  }
}
