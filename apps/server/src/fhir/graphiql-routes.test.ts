import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorToOutcome } from '../errors/to-outcome.js';
import { graphiqlRoutes } from './graphiql-routes.js';

describe('$graphiql', () => {
  it('redirects to HEARTH_APP_BASE_URL with the query to prefill; without an app, a 404 that says why', async () => {
    const app = Fastify();
    // As app.ts answers errors: the OperationOutcome with its status.
    app.setErrorHandler((err, _request, reply) => {
      const mapped = errorToOutcome(err);
      return reply.status(mapped.status).send(mapped.outcome);
    });
    await app.register(async (scope) => graphiqlRoutes(scope, { appUrl: 'https://app.example.org' }), { prefix: '/a' });
    await app.register(async (scope) => graphiqlRoutes(scope, { appUrl: undefined }), { prefix: '/b' });
    try {
      const res = await app.inject({ url: '/a/$graphiql' });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('https://app.example.org/graphiql');
      const withQuery = await app.inject({ url: `/a/$graphiql?query=${encodeURIComponent('{ PatientList { id } }')}` });
      expect(new URL(String(withQuery.headers.location)).searchParams.get('query')).toBe('{ PatientList { id } }');
      const none = await app.inject({ url: '/b/$graphiql' });
      expect(none.statusCode).toBe(404);
      expect(none.json().resourceType).toBe('OperationOutcome');
      expect(none.body).toMatch(/HEARTH_APP_BASE_URL/);
    } finally {
      await app.close();
    }
  });
});
