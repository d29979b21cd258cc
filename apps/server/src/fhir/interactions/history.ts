// hl7.org/fhir/R4/http.html#history
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ctx } from '../context.js';
import { responseShape, sendJsonText } from '../../http/fhir-reply.js';
import { historyBundleText, type HistoryParams } from '../../resources/history.js';

/** Instance, type and system history (resources/history.ts builds the page). */
export async function historyInteraction(
  request: FastifyRequest<{ Params: HistoryParams }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { repo, fhirBase } = ctx(request);
  const q = request.query as Record<string, string | string[] | undefined>;
  const text = await historyBundleText(repo, fhirBase, request.params, q);
  return sendJsonText(reply, 200, text, responseShape(request).pretty);
}
