import type { FastifyReply, FastifyRequest } from 'fastify';
import { allOk, type OperationOutcome, type Resource } from '@hearth/core';
import { FHIR_JSON } from '../operations/result.js';
import type { ResponseShape } from '../resources/elements.js';

/** The query parameters that shape any FHIR response. */
export function responseShape(request: FastifyRequest): ResponseShape {
  const q = request.query as Record<string, string | string[] | undefined>;
  const first = (name: string): string | undefined => {
    const v = q[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const elements = first('_elements');
  return {
    pretty: first('_pretty') === 'true',
    summary: first('_summary'),
    elements: elements
      ? elements
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined,
  };
}

/** Sends JSON text as FHIR, re-indenting only when _pretty asks for it. */
export function sendJsonText(reply: FastifyReply, status: number, text: string, pretty: boolean): FastifyReply {
  const body = pretty ? JSON.stringify(JSON.parse(text), null, 2) : text;
  return reply.code(status).header('content-type', FHIR_JSON).send(body);
}

export function sendJson(reply: FastifyReply, status: number, value: unknown, pretty = false): FastifyReply {
  return reply
    .code(status)
    .header('content-type', FHIR_JSON)
    .send(JSON.stringify(value, null, pretty ? 2 : undefined));
}

export function sendOutcome(reply: FastifyReply, status: number, outcome: OperationOutcome): FastifyReply {
  return sendJson(reply, status, outcome);
}

export function versionHeaders(reply: FastifyReply, versionId: number, lastUpdated: Date): void {
  reply.header('etag', `W/"${versionId}"`);
  reply.header('last-modified', lastUpdated.toUTCString());
}

export type PreferReturn = 'minimal' | 'representation' | 'OperationOutcome';

/** Prefer: return=... (R4 http.html#ops); representation is the default. */
export function preferReturn(request: FastifyRequest): PreferReturn {
  const prefer = String(request.headers.prefer ?? '');
  const m = /return=(minimal|representation|OperationOutcome)/i.exec(prefer);
  if (!m) {
    return 'representation';
  }
  const v = m[1].toLowerCase();
  return v === 'minimal' ? 'minimal' : v === 'operationoutcome' ? 'OperationOutcome' : 'representation';
}

/** Answers a write according to Prefer: the resource, nothing, or an OperationOutcome. */
export function sendWriteResult(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  result: { content: string; resource: Resource },
  shape: ResponseShape,
  outcome: OperationOutcome = allOk,
): FastifyReply {
  switch (preferReturn(request)) {
    case 'minimal':
      return reply.code(status).send();
    case 'OperationOutcome':
      return sendJson(reply, status, outcome, shape.pretty);
    default:
      return sendJsonText(reply, status, result.content, shape.pretty);
  }
}
