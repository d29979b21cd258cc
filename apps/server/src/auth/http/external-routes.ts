import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { AuthModule } from '../module.js';
import { externalCallback, externalStart, PENDING_COOKIE_PREFIX } from '../external-idp.js';
import { requestInfo } from './common.js';

type Q = FastifyRequest<{ Querystring: Record<string, string | undefined> }>;

/** Pending sign-ins a browser may hold at once; starting one more clears the older ones. */
const MAX_PENDING = 5;

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
    const setCookies = [serializeCookie(cookie.name, cookie.value, { ...cookieOptions, maxAge: cookie.maxAgeSeconds })];
    // Sign-ins in several tabs each keep their own cookie; abandoned ones must not pile up
    // until the browser's Cookie header outgrows what servers accept.
    const abandoned = Object.keys(parseCookies(request.headers.cookie ?? '')).filter((name) =>
      name.startsWith(PENDING_COOKIE_PREFIX),
    );
    if (abandoned.length >= MAX_PENDING) {
      setCookies.push(...abandoned.map((name) => serializeCookie(name, '', { ...cookieOptions, maxAge: 0 })));
    }
    reply.header('set-cookie', setCookies);
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
