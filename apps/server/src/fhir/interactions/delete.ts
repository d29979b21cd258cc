// hl7.org/fhir/R4/http.html#delete and #cdelete
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, fail } from '@hearth/core';
import { ctx, parseETagVersion, rawQuery } from '../context.js';

/** Most resources one conditional delete may remove; more is a 412 (R4 allows servers to bound this). */
export const MAX_CONDITIONAL_DELETE = 100;

export async function deleteInteraction(
  request: FastifyRequest<{ Params: { resourceType: string; id: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { resourceType, id } = request.params;
  const ifMatch = parseETagVersion(request.headers['if-match'] as string | undefined);
  await ctx(request).repo.deleteResource(resourceType, id, { ifMatch });
  return reply.code(204).send();
}

export async function conditionalDeleteInteraction(
  request: FastifyRequest<{ Params: { resourceType: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { resourceType } = request.params;
  const query = rawQuery(request);
  if (!query) {
    fail(badRequest('Conditional delete needs search parameters'));
  }
  await ctx(request).repo.conditionalDelete(resourceType, query, MAX_CONDITIONAL_DELETE);
  return reply.code(204).send();
}
