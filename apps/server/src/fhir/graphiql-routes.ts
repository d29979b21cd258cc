// GraphQL's HTTP side beside the $graphql operation: the $graphiql redirect, and the schema built
// once the server listens.
import type { FastifyInstance } from 'fastify';
import { fail, notFoundWith } from '@hearth/core';
import { findAppDist } from '../app-static/plugin.js';
import { appBaseUrl } from '../auth/deps.js';
import type { Config } from '../config/schema.js';
import type { GraphqlModule } from '../graphql/module.js';
import type { Logger } from '../platform/logger.js';

/**
 * Where `$graphiql` sends the browser: the web app's GraphiQL page (`/graphiql`, bundled with the
 * app, signed in with the app's session), with the `query` to prefill if one was given.
 */
export function graphiqlLocation(appUrl: string, query?: string): string {
  const url = new URL('graphiql', appUrl.endsWith('/') ? appUrl : `${appUrl}/`);
  if (query) {
    url.searchParams.set('query', query);
  }
  return url.toString();
}

/**
 * `$graphiql`, next to `$graphql` (registered under the FHIR prefix): a redirect to the web app's
 * GraphiQL page at `appUrl`. Without a web app (an API-only server with no HEARTH_APP_BASE_URL),
 * a 404 OperationOutcome that says so: the page is the app's, and loads nothing from a CDN.
 */
export async function graphiqlRoutes(app: FastifyInstance, options: { appUrl: string | undefined }): Promise<void> {
  app.get<{ Querystring: { query?: unknown } }>('/$graphiql', async (request, reply) => {
    if (!options.appUrl) {
      fail(
        notFoundWith(
          'GraphiQL is part of the web app, which this server does not serve: build apps/app, or set HEARTH_APP_BASE_URL to where it runs. $graphql itself works without it.',
        ),
      );
    }
    const query = typeof request.query.query === 'string' ? request.query.query : undefined;
    return reply.header('cache-control', 'no-cache').redirect(graphiqlLocation(options.appUrl, query), 302);
  });
}

/** Registered under the FHIR base prefix: `$graphiql` (HEARTH_GRAPHIQL_ENABLED) and the schema warm-up. */
export async function graphqlHttpRoutes(
  app: FastifyInstance,
  options: { config: Config; graphql: GraphqlModule; logger?: Logger },
): Promise<void> {
  const { config, graphql, logger } = options;
  if (config.graphiqlEnabled) {
    // The app's GraphiQL page: where HEARTH_APP_BASE_URL says, or this server when it serves the app.
    const appUrl = config.appBaseUrl || findAppDist() ? appBaseUrl(config) : undefined;
    await graphiqlRoutes(app, { appUrl });
  }
  // The schema is built once per process at start-up, once the server listens (so that it
  // does not delay start-up, and apps that never listen, like most tests, never build it).
  app.addHook('onListen', async () => {
    setImmediate(() => {
      const started = performance.now();
      graphql.schemas();
      logger?.debug({ ms: Math.round(performance.now() - started) }, 'GraphQL schema built');
    });
  });
}
