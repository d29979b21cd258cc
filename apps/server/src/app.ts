import Fastify, { type FastifyBaseLogger, type FastifyBodyParser, type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import websocket from '@fastify/websocket';
import { randomUUID } from 'node:crypto';
import { maxHeaderSize } from 'node:http';
import { badRequest, notFoundWith } from '@hearth/core';
import type { Config } from './config/schema.js';
import type { Logger } from './platform/logger.js';
import type { Pool } from './platform/postgres.js';
import { errorToOutcome } from './errors/to-outcome.js';
import { parseFormBody, parseJsonBody } from './http/body.js';
import { assertStorableRequest, inRouteShape } from './http/storable-input.js';
import { sendOutcome } from './http/fhir-reply.js';
import { sendClientError } from './http/client-error.js';
import { corsOptions } from './http/cors.js';
import { RequestLog } from './http/request-log.js';
import { fhirPlugin } from './fhir/plugin.js';
import { healthPlugin } from './health/plugin.js';
import { authPlugin } from './auth/plugin.js';
import { adminPlugin } from './admin/plugin.js';
import { scimPlugin } from './scim/plugin.js';
import { runMigrations } from './storage/migrations/runner.js';
import { installRateLimits } from './ratelimit/plugin.js';
import { automationPlugin } from './fhir/automation-routes.js';
import { agentPlugin } from './fhir/agent-routes.js';
import { fhircastPlugin } from './fhir/fhircast-routes.js';
import { signedBinaryRoutes } from './fhir/signed-binary-routes.js';
import { emailRoutes } from './fhir/email-routes.js';
import { graphqlHttpRoutes } from './fhir/graphiql-routes.js';
import { appStaticPlugin, findAppDist } from './app-static/plugin.js';
import { docsStaticPlugin, findDocsBuild } from './docs-static/plugin.js';
import type { Services } from './services.js';
import type { Telemetry } from './observability/telemetry.js';
import { countWebsockets, metricsRoute, telemetryHooks, tracedServerFactory } from './http/telemetry.js';
import { describeRequest } from './http/interaction.js';

export interface AppDeps {
  config: Config;
  pool: Pool;
  logger: Logger;
  services: Services;
  /** Traces and metrics (observability/setup.ts); none when absent. */
  telemetry?: Telemetry;
}

const JSON_TYPES = [
  'application/json',
  'application/fhir+json',
  'application/json-patch+json',
  'application/scim+json',
];

/** Builds the HTTP application from its dependencies; listening is main.ts's job. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // pino's Logger and Fastify's base logger differ only in typing.
  const { config, logger } = deps;
  const telemetry = deps.telemetry ?? {};
  const app = Fastify({
    // With traces exported, the HTTP server starts each request's span (http/telemetry.ts).
    ...(telemetry.tracer ? { serverFactory: tracedServerFactory(telemetry.tracer) } : {}),
    loggerInstance: logger as unknown as FastifyBaseLogger,
    bodyLimit: config.maxBodyBytes,
    // A client that stalls (headers never finished, a body trickling in, a socket gone silent) is cut
    // off: it holds a socket until then, never a database connection (handlers run on whole requests).
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.idleTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      // Node refuses a headers timeout longer than the request timeout.
      headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
      // How often Node looks for connections past those timeouts (its default, 30 s, would let a
      // stalled client stay up to 30 s longer than configured).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
    },
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1000 },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // Requests Node's parser refuses (headers over its limit, malformed) get an OperationOutcome too.
    clientErrorHandler: (err, socket) => sendClientError(err, socket, maxHeaderSize),
    // One line per request, when it is done.
    logController: new RequestLog(logger.isLevelEnabled('info')),
    trustProxy: true,
    // Errors the router raises before any route runs (malformed percent-encoding, over-long ids).
    frameworkErrors: (error, _request, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      return sendOutcome(
        reply,
        tooLong ? 414 : 400,
        badRequest(tooLong ? 'A path segment of the URL is too long' : 'Malformed URL (invalid percent-encoding)'),
      );
    },
  });

  telemetryHooks(app, telemetry);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Before any other hook (rate limits, sign-in) can hand the URL or a header to the database.
    assertStorableRequest(request);
  });

  // Graceful shutdown: close() only drops connections idle at that moment; a keep-alive connection
  // whose in-flight response finishes later is ended here instead of lingering until its timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Its ANALYZE in progress ends before the pool does.
  app.addHook('onClose', async () => {
    await deps.services.autoAnalyzer?.stop();
  });
  app.addHook('onClose', async () => deps.services.terminology.stop());
  // The audit entries still in memory are written before the pool closes.
  app.addHook('onClose', async () => deps.services.audit.stop());
  app.addHook('onResponse', async (request) => {
    if (closing) {
      request.raw.socket?.end();
    }
  });

  // Bodies: JSON types parsed with depth and prototype checks; forms as text; anything else raw (Binary).
  app.removeAllContentTypeParsers();
  const jsonParser: FastifyBodyParser<string> = (req, body, done) => {
    try {
      done(
        null,
        bodilessRequest(req.method, body as string) ? undefined : parseJsonBody(body as string, config.maxJsonDepth),
      );
    } catch (err) {
      done(err as Error, undefined);
    }
  };
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, jsonParser);
  app.addContentTypeParser(/^[a-z]+\/[a-z0-9.+-]*json$/i, { parseAs: 'string' }, jsonParser);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseFormBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: config.maxBinaryBytes }, (_req, body, done) => {
    done(null, body);
  });

  app.setErrorHandler((err, request, reply) => {
    const mapped = errorToOutcome(inRouteShape(err, request));
    if (mapped.unexpected) {
      request.log.error({ err, ...describeRequest(request) }, 'unexpected error');
    } else if (mapped.retryAfterSeconds !== undefined) {
      request.log.warn({ err }, 'service unavailable');
    }
    if (mapped.retryAfterSeconds !== undefined) {
      reply.header('retry-after', String(mapped.retryAfterSeconds));
    }
    return sendOutcome(reply, mapped.status, mapped.outcome);
  });
  app.setNotFoundHandler((request, reply) => {
    return sendOutcome(reply, 404, notFoundWith(`No route for ${request.method} ${request.url.split('?')[0]}`));
  });

  await app.register(cors, corsOptions(config.corsOrigins));

  // One websocket server for every /ws/* route (subscriptions, agents). A message is a JSON body like
  // any other (an agent's DICOM instance travels base64-encoded in one): the same limit.
  await app.register(websocket, { options: { maxPayload: config.maxBodyBytes } });
  if (telemetry.metrics) {
    countWebsockets(app, telemetry.metrics);
    // Prometheus' scrape endpoint, only behind its token (docs/self-hosting/opentelemetry.md).
    if (config.metricsToken) {
      metricsRoute(app, telemetry.metrics, config.metricsToken);
    }
  }

  installRateLimits(app, { config, pool: deps.pool, logger, authenticator: deps.services.auth.authenticator });

  for (const prefix of ['', '/api']) {
    await app.register(healthPlugin, { prefix, pool: deps.pool });
    await app.register(authPlugin, { prefix, auth: deps.services.auth, fhirPrefix: '/fhir/R4' });
    await app.register(adminPlugin, {
      prefix,
      auth: deps.services.auth,
      super: {
        reindexer: deps.services.reindexer,
        asyncJobs: deps.services.automation.asyncJobs,
        migrate: () => runMigrations(deps.pool, deps.logger),
      },
    });
    await app.register(scimPlugin, { prefix, auth: deps.services.auth });
    await app.register(
      async (scope) =>
        fhirPlugin(scope, {
          contextFor: deps.services.contextFor,
          shaper: deps.services.shaper,
          operations: deps.services.operations,
          search: deps.services.search.service,
          binary: deps.services.binaryStore,
          binaryUrls: deps.services.binaryUrls,
          audit: deps.services.audit,
          searchParams: (type, projectId) => deps.services.search.searchParamsFor(type, projectId),
          limits: {
            maxBundleEntries: config.maxBundleEntries,
            maxBodyBytes: config.maxBodyBytes,
            maxJsonDepth: config.maxJsonDepth,
          },
        }),
      { prefix: `${prefix}/fhir/R4` },
    );
    await app.register(
      (scope) => graphqlHttpRoutes(scope, { config, graphql: deps.services.graphql, logger: deps.logger }),
      { prefix: `${prefix}/fhir/R4` },
    );
  }
  await app.register(automationPlugin, {
    automation: deps.services.automation,
    contextFor: deps.services.contextFor,
  });
  await app.register(agentPlugin, { agents: deps.services.agents });
  await app.register(signedBinaryRoutes, {
    signer: deps.services.binaryUrls,
    store: deps.services.binaryStore,
    systemRepo: () => deps.services.systemRepo(),
  });
  await app.register(emailRoutes, {
    authenticator: deps.services.auth.authenticator,
    mailer: deps.services.auth.deps.mailer,
  });
  await app.register(fhircastPlugin, {
    fhircast: deps.services.fhircast,
    authenticator: deps.services.auth.authenticator,
  });
  // The documentation site at /docs/ (apps/docs/build, when `npm run docs` has built it).
  const docsBuild = findDocsBuild();
  if (docsBuild) await app.register(docsStaticPlugin, { root: docsBuild });
  // The web app at '/', after every API route (apps/app/dist, when built).
  const appDist = findAppDist();
  if (appDist) await app.register(appStaticPlugin, { root: appDist });
  return app;
}

/**
 * A DELETE (or OPTIONS) with a JSON Content-Type and no body: FHIR clients commonly send the header
 * on every request, and these methods take no body, so there is nothing to parse or reject.
 */
function bodilessRequest(method: string, body: string): boolean {
  return (method === 'DELETE' || method === 'OPTIONS') && body.trim() === '';
}
