// The HTTP side of the audit trail: each FHIR request carries its audit state through its async
// work, names its caller once authenticated, and hands what it did to the trail once answered.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RequestAudit, type AuditModule } from '../audit/module.js';

declare module 'fastify' {
  interface FastifyRequest {
    audit: RequestAudit | null;
  }
}

const FHIR_BASE = /^(?:\/api)?\/fhir\/R4\/?/;

/** Registers the hooks; call after the hook that sets `request.fhir` (the caller's context). */
export function auditHooks(app: FastifyInstance, audit: AuditModule): void {
  app.decorateRequest('audit', null);
  app.addHook('onRequest', (request, _reply, done) => {
    const state = new RequestAudit(new Date());
    request.audit = state;
    audit.capture.run(state, done);
  });
  app.addHook('preHandler', async (request) => {
    if (request.audit && request.fhir) {
      const userAgent = request.headers['user-agent'];
      await audit.begin(request.audit, request.fhir, request.ip, typeof userAgent === 'string' ? userAgent : undefined);
      if (request.method === 'PATCH') request.audit.interaction = 'patch';
    }
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    if (request.audit?.info && typeof payload === 'string') request.audit.payload = payload;
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const state = request.audit;
    if (!state) return;
    state.open = false;
    if (!state.info) return;
    audit.finish(state, {
      method: request.method,
      path: pathOf(request),
      query: queryOf(request),
      status: reply.statusCode,
      body: request.body,
      payload: state.payload,
      started: state.started,
      interaction: state.interaction,
    });
    state.payload = undefined;
  });
}

function pathOf(request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  return path.replace(FHIR_BASE, '');
}

/** The query string, and a POST _search's form parameters after it. */
function queryOf(request: FastifyRequest): string {
  const i = request.url.indexOf('?');
  const query = i < 0 ? '' : request.url.slice(i + 1);
  const body = request.body;
  if (
    request.method === 'POST' &&
    /\/_search$/.test(request.url.split('?')[0]) &&
    body &&
    typeof body === 'object' &&
    !Buffer.isBuffer(body)
  ) {
    const form = new URLSearchParams(body as Record<string, string>).toString();
    return query ? `${query}&${form}` : form;
  }
  return query;
}
