import type { FastifyInstance } from 'fastify';
import { fail, notFoundWith } from '@hearth/core';

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
