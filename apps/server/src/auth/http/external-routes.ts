import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { AuthModule } from '../module.js';
import { externalCallback, externalStart } from '../external-idp.js';
import { requestInfo } from './common.js';

type Q = FastifyRequest<{ Querystring: Record<string, string | undefined> }>;

/**
 * Sign-in through an external OpenID Connect provider: /auth/external/start redirects to it with
 * the pending sign-in in a cookie, /auth/external is where it sends the browser back.
 */
export async function externalRoutes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const callback = new URL('auth/external', auth.deps.config.baseUrl);
  const cookieOptions = {
    httpOnly: true,
    // Lax: the provider's redirect back is a top-level GET navigation, which carries the cookie.
    sameSite: 'lax' as const,
    secure: callback.protocol === 'https:',
    path: callback.pathname,
  };

  app.get('/auth/external/start', async (request: Q, reply) => {
    const { url, cookie } = await externalStart(auth.deps, request.query);
    reply.header(
      'set-cookie',
      serializeCookie(cookie.name, cookie.value, { ...cookieOptions, maxAge: cookie.maxAgeSeconds }),
    );
    return reply.redirect(url);
  });

  app.get('/auth/external', async (request: Q, reply) => {
    const cookies = parseCookies(request.headers.cookie ?? '');
    const { url, clearCookie } = await externalCallback(auth.deps, request.query, cookies, requestInfo(request));
    if (clearCookie) {
      reply.header('set-cookie', serializeCookie(clearCookie, '', { ...cookieOptions, maxAge: 0 }));
    }
    return reply.redirect(url);
  });
}
