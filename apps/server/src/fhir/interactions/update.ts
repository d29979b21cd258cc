// hl7.org/fhir/R4/http.html#update and #cond-update
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, created as createdOutcome, fail, allOk } from '@hearth/core';
import { assertIdParam, bodyResource, ctx, parseETagVersion, rawQuery } from '../context.js';
import { responseShape, sendWriteResult, versionHeaders } from '../../http/fhir-reply.js';

export async function updateInteraction(
  request: FastifyRequest<{ Params: { resourceType: string; id: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { resourceType, id } = request.params;
  const { repo, fhirBase } = ctx(request);
  repo.assertType(resourceType);
  assertIdParam(id);
  const resource = bodyResource(request, resourceType);
  if (resource.id === undefined) {
    fail(badRequest('Resource id is required in the body of an update', `${resourceType}.id`));
  }
  if (resource.id !== id) {
    fail(
      badRequest(`Resource id in body (${String(resource.id)}) does not match the URL (${id})`, `${resourceType}.id`),
    );
  }
  const ifMatch = parseETagVersion(request.headers['if-match'] as string | undefined);
  const result = await repo.updateResource(resource, { ifMatch });
  versionHeaders(reply, result.versionId, result.lastUpdated);
  if (result.created) {
    reply.header('location', `${fhirBase}${resourceType}/${id}/_history/${result.versionId}`);
  }
  const status = result.created ? 201 : 200;
  return sendWriteResult(
    request,
    reply,
    status,
    result,
    responseShape(request),
    result.created ? createdOutcome : allOk,
  );
}

export async function conditionalUpdateInteraction(
  request: FastifyRequest<{ Params: { resourceType: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { resourceType } = request.params;
  const { repo, fhirBase } = ctx(request);
  repo.assertType(resourceType);
  const query = rawQuery(request);
  if (!query) {
    fail(badRequest('Conditional update needs search parameters; to update one resource use PUT [type]/[id]'));
  }
  const resource = bodyResource(request, resourceType);
  const result = await repo.conditionalUpdate(resource, query);
  versionHeaders(reply, result.versionId, result.lastUpdated);
  if (result.created) {
    reply.header('location', `${fhirBase}${resourceType}/${result.resource.id}/_history/${result.versionId}`);
  }
  return sendWriteResult(request, reply, result.created ? 201 : 200, result, responseShape(request));
}
