import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import { unauthorizedWith } from '@hearth/core';
import { ATTR, type Telemetry } from '../observability/telemetry.js';
import type { HearthMetrics } from '../observability/metrics.js';
import { describeRequest } from './interaction.js';
import { sendOutcome } from './fhir-reply.js';

const SPAN = Symbol('hearth.span');
type TracedRequest = IncomingMessage & { [SPAN]?: Span };

interface ServerFactoryOptions {
  http?: ServerOptions;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
}

/**
 * Fastify's HTTP server with a span around each request: started before Fastify sees the request
 * (continuing the caller's W3C `traceparent`), current for everything the request does (hooks,
 * handlers, SQL), ended when the response is closed. Used only when traces are exported; the
 * server is otherwise Fastify's own. Set the same way Fastify sets its own server up.
 */
export function tracedServerFactory(tracer: Tracer): FastifyServerFactory {
  return (handler, options) => {
    const opts = options as ServerFactoryOptions;
    const server = createServer(opts.http ?? {}, (req: TracedRequest, res: ServerResponse) => {
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(
        req.method ?? 'HTTP',
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': req.method ?? '',
            // The path only: query values name patients and carry codes.
            'url.path': pathOf(req.url ?? '/'),
            'url.scheme': 'http',
          },
        },
        parent,
      );
      req[SPAN] = span;
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) {
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      });
      context.with(trace.setSpan(parent, span), () => handler(req, res));
    });
    if (opts.keepAliveTimeout !== undefined) server.keepAliveTimeout = opts.keepAliveTimeout;
    if (opts.requestTimeout !== undefined) server.requestTimeout = opts.requestTimeout;
    if (opts.connectionTimeout !== undefined) server.setTimeout(opts.connectionTimeout);
    return server;
  };
}

/** The request's trace and span ids (hex), for its log line; undefined when traces are not exported. */
export function traceIdsOf(raw: IncomingMessage): { traceId: string; spanId: string } | undefined {
  const span = (raw as TracedRequest)[SPAN];
  if (!span) {
    return undefined;
  }
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

/**
 * Request telemetry: the request span's name and attributes (the route, the FHIR interaction,
 * resource type, operation, project, request id) once the response is sent, and the request
 * duration histogram. Register before the routes, so every route has them.
 */
export function telemetryHooks(app: FastifyInstance, telemetry: Telemetry): void {
  const { tracer, metrics } = telemetry;
  if (tracer) {
    app.addHook('onSend', (request, _reply, payload, done) => {
      const span = (request.raw as TracedRequest)[SPAN];
      if (span) {
        const route = request.routeOptions.url;
        const described = describeRequest(request);
        span.updateName(route ? `${request.method} ${route}` : request.method);
        if (route) span.setAttribute('http.route', route);
        span.setAttribute(ATTR.requestId, request.id);
        if (described.interaction) span.setAttribute(ATTR.interaction, described.interaction);
        if (described.resourceType) span.setAttribute(ATTR.resourceType, described.resourceType);
        if (described.operation) span.setAttribute(ATTR.operation, described.operation);
        if (described.project) span.setAttribute(ATTR.project, described.project);
        if (described.user) span.setAttribute(ATTR.user, described.user);
      }
      done(null, payload);
    });
  }
  if (metrics) {
    const duration = metrics.httpRequestDuration;
    app.addHook('onResponse', (request, reply, done) => {
      duration.observe(
        {
          method: request.method,
          route: request.routeOptions.url ?? 'unmatched',
          interaction: describeRequest(request).interaction ?? 'none',
          status: reply.statusCode,
        },
        reply.elapsedTime / 1000,
      );
      done();
    });
  }
}

/** Counts open websockets by endpoint (/ws/subscriptions-r4, /ws/agent), from the one websocket server. */
export function countWebsockets(app: FastifyInstance, metrics: HearthMetrics): void {
  app.websocketServer.on(
    'connection',
    (socket: { once(event: 'close', fn: () => void): void }, req: IncomingMessage) => {
      const endpoint = /\/ws\/agent\b/.test(req.url ?? '') ? 'agent' : 'subscriptions';
      metrics.websocketConnections.inc({ endpoint });
      socket.once('close', () => metrics.websocketConnections.dec({ endpoint }));
    },
  );
}

/**
 * GET /metrics: Prometheus' text format, for a scraper that sends `Authorization: Bearer
 * <HEARTH_METRICS_TOKEN>`. Without a configured token the route does not exist (404).
 */
export function metricsRoute(app: FastifyInstance, metrics: HearthMetrics, token: string): void {
  const expected = createHash('sha256').update(token).digest();
  app.get('/metrics', async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() ?? '';
    // Compared as digests, in constant time: the comparison says nothing of how much matched.
    if (!timingSafeEqual(createHash('sha256').update(given).digest(), expected)) {
      reply.header('www-authenticate', 'Bearer realm="hearth-metrics"');
      return sendOutcome(
        reply,
        401,
        unauthorizedWith('GET /metrics needs the metrics token (HEARTH_METRICS_TOKEN) as a Bearer token'),
      );
    }
    const { contentType, body } = await metrics.exposition();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
