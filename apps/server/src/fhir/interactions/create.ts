// hl7.org/fhir/R4/http.html#create and #ccreate
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, created, fail } from '@hearth/core';
import { bodyResource, ctx } from '../context.js';
import { responseShape, sendWriteResult, versionHeaders } from '../../http/fhir-reply.js';

export async function createInteraction(
  request: FastifyRequest<{ Params: { resourceType: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { resourceType } = request.params;
  const { repo, fhirBase } = ctx(request);
  repo.assertType(resourceType);
  const resource = bodyResource(request, resourceType);
  const ifNoneExist = request.headers['if-none-exist'];
  let result;
  if (typeof ifNoneExist === 'string' && ifNoneExist.trim() !== '') {
    const query = ifNoneExist.trim().replace(/^[^?]*\?/, '');
    if (!query) {
      fail(badRequest('If-None-Exist must hold search parameters'));
    }
    result = await repo.createResourceIfNoneExist(resource, query);
  } else {
    result = await repo.createResource(resource);
  }
  versionHeaders(reply, result.versionId, result.lastUpdated);
  reply.header('location', `${fhirBase}${resourceType}/${result.resource.id}/_history/${result.versionId}`);
  return sendWriteResult(request, reply, result.created ? 201 : 200, result, responseShape(request), created);
}
