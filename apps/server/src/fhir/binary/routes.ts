// Binary: any content type in and out (hl7.org/fhir/R4/binary.html#rest), stored outside the JSON tables.
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allOk, badRequest, created, fail, payloadTooLarge, type Resource } from '@hearth/core';
import type { BinaryStore } from '../../storage/binary-store.js';
import { updateTarget } from '../../storage/conditional.js';
import type { WriteResult } from '../../storage/types.js';
import { parseJsonBody } from '../../http/body.js';
import { responseShape, sendWriteResult, versionHeaders } from '../../http/fhir-reply.js';
import { assertIdParam, ctx, parseETagVersion, rawQuery } from '../context.js';
import { notModified } from '../interactions/read.js';
import { sendBinaryAsResource, sendBinaryContent, storeBinaryResource, wantsFhirResource } from './content.js';
import { withStorageKey } from '../../storage/binary-key.js';

export interface BinaryRoutesDeps {
  store: BinaryStore;
  /** Largest FHIR JSON body (a Binary resource with base64 data). */
  maxJsonBytes: number;
  maxJsonDepth: number;
}

const FHIR_JSON_TYPES = new Set(['application/fhir+json', 'application/json+fhir']);

/**
 * Registered inside the FHIR plugin (its hooks apply) in a context of its own, whose only body
 * parser hands the raw request stream to the handler: uploads go to disk without being buffered.
 */
export async function binaryRoutes(app: FastifyInstance, deps: BinaryRoutesDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  // An upload refused before its end (413, 4xx): the rest of the body is not worth reading,
  // so the connection closes after the answer instead of waiting for it.
  app.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete) {
      reply.header('connection', 'close');
    }
  });

  app.post('/Binary', (request, reply) => writeBinary(request, reply, deps));
  app.put('/Binary', (request, reply) => writeBinary(request, reply, deps, { conditional: true }));
  app.put('/Binary/:id', (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    assertIdParam(request.params.id);
    return writeBinary(request, reply, deps, { id: request.params.id });
  });
  app.get('/Binary/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const result = await ctx(request).repo.readResource('Binary', request.params.id);
    versionHeaders(reply, result.versionId, result.lastUpdated);
    if (notModified(request, result.versionId, result.lastUpdated)) {
      return reply.code(304).send();
    }
    return sendBinary(request, reply, deps.store, result);
  });
  app.get(
    '/Binary/:id/_history/:vid',
    async (request: FastifyRequest<{ Params: { id: string; vid: string } }>, reply) => {
      const result = await ctx(request).repo.readVersion('Binary', request.params.id, request.params.vid);
      versionHeaders(reply, result.versionId, result.lastUpdated);
      return sendBinary(request, reply, deps.store, result);
    },
  );
}

function sendBinary(
  request: FastifyRequest,
  reply: FastifyReply,
  store: BinaryStore,
  result: { resource: Resource; content: string; versionId: number; lastUpdated: Date },
): Promise<FastifyReply> {
  const contentType = (result.resource as { contentType?: string }).contentType;
  if (wantsFhirResource(request, contentType)) {
    return sendBinaryAsResource(reply, store, result);
  }
  return sendBinaryContent(reply, store, result.resource);
}

/** POST (create), PUT /Binary/id (update or create with that id) and PUT /Binary?query (conditional). */
async function writeBinary(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: BinaryRoutesDeps,
  target: { id?: string; conditional?: boolean } = {},
): Promise<FastifyReply> {
  const { repo, fhirBase } = ctx(request);
  const ifMatch = parseETagVersion(request.headers['if-match'] as string | undefined);
  let id = target.id;
  if (target.conditional) {
    const query = rawQuery(request);
    if (!query) {
      fail(badRequest('Conditional update needs search parameters; to update one resource use PUT [type]/[id]'));
    }
    // The body is read after the match is known: its id is not compared with the match's.
    id = await updateTarget(repo, 'Binary', query, undefined);
  }
  const declared = Number(request.headers['content-length']);
  const mediaType = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  const isResource = FHIR_JSON_TYPES.has(mediaType);
  const limit = isResource ? deps.maxJsonBytes : deps.store.maxBytes;
  if (Number.isFinite(declared) && declared > limit) {
    drain(request.body);
    fail(payloadTooLarge(`Request body is larger than ${limit} bytes`));
  }

  let resource: Resource;
  let key: string | undefined;
  if (isResource) {
    const text = await readText(request.body as Readable | undefined, limit);
    const body = parseJsonBody(text, deps.maxJsonDepth) as Resource;
    if (typeof body !== 'object' || body === null || body.resourceType !== 'Binary') {
      fail(badRequest('A FHIR JSON body posted to Binary must be a Binary resource', 'resourceType'));
    }
    if (target.id !== undefined && body.id !== target.id) {
      fail(badRequest(`Resource id in body (${String(body.id)}) does not match the URL (${target.id})`, 'Binary.id'));
    }
    ({ resource, key } = await storeBinaryResource(deps.store, body));
  } else {
    const stream = request.body as Readable | undefined;
    const stored = stream ? await deps.store.write(stream) : await deps.store.write(Buffer.alloc(0));
    key = stored.key;
    const contentType = String(request.headers['content-type'] ?? '').trim() || 'application/octet-stream';
    const raw: Resource & Record<string, unknown> = { resourceType: 'Binary', contentType };
    const securityContext = request.headers['x-security-context'];
    if (typeof securityContext === 'string' && securityContext.trim()) {
      raw.securityContext = { reference: securityContext.trim() };
    }
    resource = withStorageKey(raw, key);
  }

  let result: WriteResult;
  try {
    result =
      id === undefined
        ? await repo.createResource(resource)
        : await repo.updateResource({ ...resource, id }, { ifMatch });
  } catch (err) {
    if (key) {
      await deps.store.remove(key);
    }
    throw err;
  }
  versionHeaders(reply, result.versionId, result.lastUpdated);
  if (result.created) {
    reply.header('location', `${fhirBase}Binary/${result.resource.id}/_history/${result.versionId}`);
  }
  return sendWriteResult(
    request,
    reply,
    result.created ? 201 : 200,
    result,
    responseShape(request),
    result.created ? created : allOk,
  );
}

async function readText(stream: Readable | undefined, limit: number): Promise<string> {
  if (!stream) {
    return '';
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      drain(stream);
      fail(payloadTooLarge(`Request body is larger than ${limit} bytes`));
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function drain(body: unknown): void {
  const stream = body as Readable | undefined;
  if (stream && typeof stream.resume === 'function') {
    stream.resume();
  }
}
