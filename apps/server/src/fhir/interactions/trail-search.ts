// AuditEvent searches by project admins and patients are answered from the access audit trail
// (audit/search.ts), and so are reads of its entries; anyone else finds the stored AuditEvent
// resources as before.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ctx, rawQuery } from '../context.js';
import { sendJsonText } from '../../http/fhir-reply.js';
import { formPairs } from '../../http/body.js';
import type { AuditModule } from '../../audit/module.js';

export async function trailSearchInteraction(
  request: FastifyRequest,
  reply: FastifyReply,
  audit: AuditModule,
  otherwise: () => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const params = new URLSearchParams(rawQuery(request));
  if (request.method === 'POST' && request.body && typeof request.body === 'object' && !Buffer.isBuffer(request.body)) {
    const pairs = formPairs(request.body) ?? Object.entries(request.body as Record<string, unknown>);
    for (const [k, v] of pairs) params.append(k, String(v));
  }
  const text = await audit.search(ctx(request), params);
  if (text === undefined) {
    return otherwise();
  }
  return sendJsonText(reply, 200, text, params.get('_pretty') === 'true');
}

/** AuditEvent/{id}: a trail entry (for those the trail serves), else the stored AuditEvent. */
export async function trailReadInteraction(
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
  audit: AuditModule,
  otherwise: () => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const text = await audit.read(ctx(request), request.params.id);
  if (text === undefined) {
    return otherwise();
  }
  return sendJsonText(reply, 200, text, new URLSearchParams(rawQuery(request)).get('_pretty') === 'true');
}
