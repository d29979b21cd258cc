import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorToOutcome } from '../errors/to-outcome.js';
import type { FhirContext } from '../operations/context.js';
import { operationDefinition } from '../operations/definitions/build.js';
import { OperationRegistry } from '../operations/registry.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import { runOperation, streamedOperationRoutes } from './operation-route.js';
import './context.js';

const context = { repo: { assertType: () => undefined }, fhirBase: 'http://example.org/fhir/R4/', requestId: 'r1' };
let seen: OperationInput | undefined;
let answer: OperationResult = {};
let app: FastifyInstance;

function definition(code: string, affectsState?: boolean) {
  return operationDefinition({
    id: `Thing-${code}`,
    url: `https://example.org/OperationDefinition/Thing-${code}`,
    name: code,
    title: code,
    code,
    description: 'For the test.',
    levels: { system: true, type: true, instance: true },
    resource: ['Thing'],
    affectsState,
    parameter: [],
  });
}

beforeAll(async () => {
  const registry = new OperationRegistry();
  const handler = async (input: OperationInput) => {
    seen = input;
    return answer;
  };
  registry.register({ definition: definition('echo'), handler });
  registry.register({ definition: definition('upload', true), handler, streamedTypes: ['text/csv'] });
  app = Fastify();
  app.setErrorHandler((err, _request, reply) => {
    const mapped = errorToOutcome(err);
    return reply.status(mapped.status).send(mapped.outcome);
  });
  app.decorateRequest('fhir', null as never);
  app.addHook('preHandler', async (request) => {
    request.fhir = context as unknown as FhirContext;
  });
  await app.register(async (scope) => streamedOperationRoutes(scope, registry));
  type P = FastifyRequest<{ Params: { type: string; op: string } }>;
  app.all('/fhir/R4/:type/:op', (request: P, reply) =>
    runOperation(registry, request, reply, request.params.op.slice(1), { resourceType: request.params.type }),
  );
});
afterAll(async () => {
  await app.close();
});

describe('runOperation', () => {
  it('hands the operation its input: method, target, context, query in order, headers, body, absolute url', async () => {
    answer = {};
    await app.inject({
      method: 'POST',
      url: '/fhir/R4/Thing/$echo?b=2&a=1&b=3',
      headers: { 'content-type': 'application/json', 'X-Custom': 'yes' },
      payload: JSON.stringify({ resourceType: 'Parameters' }),
    });
    expect(seen?.method).toBe('POST');
    expect(seen?.target).toEqual({ resourceType: 'Thing' });
    expect(seen?.context).toBe(context);
    expect([...(seen?.query ?? [])]).toEqual([
      ['b', '2'],
      ['a', '1'],
      ['b', '3'],
    ]);
    expect(seen?.headers['x-custom']).toBe('yes');
    expect(seen?.body).toEqual({ resourceType: 'Parameters' });
    expect(seen?.url).toBe('http://example.org/fhir/R4/Thing/$echo?b=2&a=1&b=3');
  });

  it('sends json as application/fhir+json with the status and headers of the result', async () => {
    answer = { status: 202, headers: { 'content-location': 'http://example.org/x' }, json: { resourceType: 'Basic' } };
    const res = await app.inject({ url: '/fhir/R4/Thing/$echo' });
    expect(res.statusCode).toBe(202);
    expect(res.headers['content-location']).toBe('http://example.org/x');
    expect(res.headers['content-type']).toBe('application/fhir+json; charset=utf-8');
    expect(res.body).toBe('{"resourceType":"Basic"}');
  });

  it('indents json on _pretty=true', async () => {
    answer = { json: { resourceType: 'Basic' } };
    const res = await app.inject({ url: '/fhir/R4/Thing/$echo?_pretty=true' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{\n  "resourceType": "Basic"\n}');
  });

  it('sends a body with its own content type, and an empty body when there is neither', async () => {
    answer = { body: 'MSH|^~\\&|', contentType: 'x-application/hl7-v2+er7' };
    const text = await app.inject({ url: '/fhir/R4/Thing/$echo' });
    expect(text.headers['content-type']).toBe('x-application/hl7-v2+er7');
    expect(text.body).toBe('MSH|^~\\&|');
    answer = { status: 202 };
    const none = await app.inject({ url: '/fhir/R4/Thing/$echo' });
    expect(none.statusCode).toBe(202);
    expect(none.body).toBe('');
  });

  it('answers 404 for an unknown operation and 405 for GET on one that changes state', async () => {
    expect((await app.inject({ url: '/fhir/R4/Thing/$nothing' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/fhir/R4/Thing/$upload' })).statusCode).toBe(405);
  });
});

describe('streamedOperationRoutes', () => {
  it('hands the streamed media types of an operation over unread, at its exact paths', async () => {
    answer = {};
    const res = await app.inject({
      method: 'POST',
      url: '/Thing/$upload',
      headers: { 'content-type': 'text/csv' },
      payload: 'code,display\na,A\n',
    });
    expect(res.statusCode).toBe(200);
    const body = seen?.body as Readable;
    expect(typeof body.pipe).toBe('function');
    expect(seen?.target).toEqual({ resourceType: 'Thing' });
    const instance = await app.inject({
      method: 'POST',
      url: '/Thing/123/$upload',
      headers: { 'content-type': 'text/csv' },
      payload: 'code\n',
    });
    expect(instance.statusCode).toBe(200);
    expect(seen?.target).toEqual({ resourceType: 'Thing', id: '123' });
  });
});
