// hl7.org/fhir/R4/http.html#vread
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ctx } from '../context.js';
import { responseShape, sendJson, sendJsonText, versionHeaders } from '../../http/fhir-reply.js';
import { shapeResource, type ElementShaper } from '../../resources/elements.js';

export async function vreadInteraction(
  request: FastifyRequest<{ Params: { resourceType: string; id: string; vid: string } }>,
  reply: FastifyReply,
  shaper: ElementShaper,
): Promise<FastifyReply> {
  const { resourceType, id, vid } = request.params;
  const result = await ctx(request).repo.readVersion(resourceType, id, vid);
  versionHeaders(reply, result.versionId, result.lastUpdated);
  const shape = responseShape(request);
  if (shape.summary || shape.elements) {
    return sendJson(reply, 200, shapeResource(result.resource, shape, shaper), shape.pretty);
  }
  return sendJsonText(reply, 200, result.content, shape.pretty);
}
