import type { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';

/** Every method the API serves (OPTIONS is the preflight itself). */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Request headers FHIR clients send beyond the CORS-safelisted ones. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'If-Match',
  'If-None-Match',
  'If-None-Exist',
  'If-Modified-Since',
  'Prefer',
  'X-Security-Context',
  'X-Request-Id',
  'X-Trace-Id',
];

/** Response headers a browser script may read (beyond the safelisted Content-Type, Cache-Control...). */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Content-Location',
  'Last-Modified',
  'X-Request-Id',
  'X-Trace-Id',
  'X-Progress',
  'X-Security-Context',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
];

/** How long a browser may reuse a preflight answer, in seconds (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * The @fastify/cors options for HEARTH_CORS_ORIGINS: origins listed by name are answered with their
 * own origin and `Access-Control-Allow-Credentials: true` (cookies, client certificates); `*` lets
 * any other origin call the API without credentials (`Access-Control-Allow-Origin: *`), which is
 * what bearer-token clients need and never lets a foreign page act with a user's ambient
 * credentials. An origin matched by neither gets no CORS headers, so the browser refuses it.
 */
export function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  const named = new Set(origins.filter((origin) => origin !== '*').map(normalizeOrigin));
  const anyOrigin = origins.includes('*');
  const common = {
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  };
  const listed: FastifyCorsOptions = { ...common, origin: true, credentials: true };
  const wildcard: FastifyCorsOptions = { ...common, origin: '*', credentials: false };
  const refused: FastifyCorsOptions = { origin: false };
  return {
    delegator: (request: FastifyRequest, callback: (error: Error | null, options?: FastifyCorsOptions) => void) => {
      const origin = request.headers.origin;
      if (origin && named.has(origin)) {
        callback(null, listed);
      } else {
        callback(null, anyOrigin ? wildcard : refused);
      }
    },
  };
}

/** `https://App.example.org/` → `https://app.example.org`; anything that is not an origin is a configuration error. */
function normalizeOrigin(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || url.origin === 'null' || url.href !== `${url.origin}/`) {
    throw new Error(
      `HEARTH_CORS_ORIGINS: "${value}" is not an origin: give scheme, host and port only (e.g. https://app.example.org), or *`,
    );
  }
  return url.origin;
}
