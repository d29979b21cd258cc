// hl7.org/fhir/R4/http.html#patch and conditional patch
import type { FastifyReply, FastifyRequest } from 'fastify';
import { allOk, badRequest, fail, unsupportedMediaType } from '@hearth/core';
import { assertIdParam, ctx, parseETagVersion, rawQuery } from '../context.js';
import { responseShape, sendWriteResult, versionHeaders } from '../../http/fhir-reply.js';
import { patchResource } from '../../resources/patch/apply.js';
import { keepBinaryStorage } from '../../storage/binary-key.js';

export async function patchInteraction(
  request: FastifyRequest<{ Params: { resourceType: string; id: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { resourceType, id } = request.params;
  ctx(request).repo.assertType(resourceType);
  assertIdParam(id);
  return patchAndReply(request, reply, resourceType, id);
}

/** PATCH [type]?[search]: patches the one match (404 none, 412 several). */
export async function conditionalPatchInteraction(
  request: FastifyRequest<{ Params: { resourceType: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { resourceType } = request.params;
  const { repo } = ctx(request);
  repo.assertType(resourceType);
  const query = rawQuery(request);
  if (!query) {
    fail(badRequest('Conditional patch needs search parameters; to patch one resource use PATCH [type]/[id]'));
  }
  const id = await repo.resolveCondition(resourceType, query);
  return patchAndReply(request, reply, resourceType, id);
}

async function patchAndReply(
  request: FastifyRequest,
  reply: FastifyReply,
  resourceType: string,
  id: string,
): Promise<FastifyReply> {
  const body = request.body;
  if (body === undefined || body === null || Buffer.isBuffer(body) || typeof body !== 'object') {
    fail(
      unsupportedMediaType(
        'PATCH takes application/json-patch+json (JSON Patch) or application/fhir+json (FHIRPath Patch Parameters)',
      ),
    );
  }
  const ifMatch = parseETagVersion(request.headers['if-match'] as string | undefined);
  const result = await patchResource(ctx(request).repo, resourceType, id, body, {
    ifMatch,
    guard: resourceType === 'Binary' ? keepBinaryStorage : undefined,
  });
  versionHeaders(reply, result.versionId, result.lastUpdated);
  return sendWriteResult(request, reply, 200, result, responseShape(request), allOk);
}
