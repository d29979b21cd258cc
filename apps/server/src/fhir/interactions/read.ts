// hl7.org/fhir/R4/http.html#read
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ctx } from '../context.js';
import { responseShape, sendJson, sendJsonText, versionHeaders } from '../../http/fhir-reply.js';
import { shapeResource, type ElementShaper } from '../../resources/elements.js';

export async function readInteraction(
  request: FastifyRequest<{ Params: { resourceType: string; id: string } }>,
  reply: FastifyReply,
  shaper: ElementShaper,
): Promise<FastifyReply> {
  const { resourceType, id } = request.params;
  const result = await ctx(request).repo.readResource(resourceType, id);
  versionHeaders(reply, result.versionId, result.lastUpdated);
  if (notModified(request, result.versionId, result.lastUpdated)) {
    return reply.code(304).send();
  }
  const shape = responseShape(request);
  if (shape.summary || shape.elements) {
    return sendJson(reply, 200, shapeResource(result.resource, shape, shaper), shape.pretty);
  }
  return sendJsonText(reply, 200, result.content, shape.pretty);
}

/** If-None-Match / If-Modified-Since (R4 http.html#cread). */
export function notModified(request: FastifyRequest, versionId: number, lastUpdated: Date): boolean {
  const inm = request.headers['if-none-match'];
  if (typeof inm === 'string' && inm !== '') {
    return inm
      .split(',')
      .map((s) => s.trim().replace(/^W\//, '').replace(/"/g, ''))
      .some((v) => v === '*' || v === String(versionId));
  }
  const ims = request.headers['if-modified-since'];
  if (typeof ims === 'string' && ims !== '') {
    const since = Date.parse(ims);
    // HTTP dates have second precision.
    return !Number.isNaN(since) && Math.floor(lastUpdated.getTime() / 1000) * 1000 <= since;
  }
  return false;
}
