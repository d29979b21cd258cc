import { isIP } from 'node:net';
import * as oidc from 'openid-client';
import { badRequest, fail } from '@hearth/core';
import { outboundRequest } from '../platform/outbound-http.js';
import type { AuthDeps } from './deps.js';
import type { IdentityProviderConfig } from './types.js';

/**
 * The openid-client Configuration of an external identity provider: its metadata found by
 * OpenID Connect discovery from `issuer`, its requests sent through the server's outbound policy
 * (no server-side request forgery, bounded time and size), and ID token signatures verified
 * against its JWKS. Configurations are cached, so a sign-in costs no discovery round trip and the
 * JWKS is fetched again only when the provider rotates its keys.
 */

/** How long a discovered configuration is reused before the provider's metadata is read again. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const MAX_CACHED = 500;

interface CacheEntry {
  config: Promise<oidc.Configuration>;
  expires: number;
}

const caches = new WeakMap<AuthDeps, Map<string, CacheEntry>>();

/** Where the IdP configuration lives, for the `expression` of configuration errors. */
export type IdpOwner = 'DomainConfiguration' | 'ClientApplication';

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return true;
  }
  if (isIP(host) === 4) {
    return host.startsWith('127.');
  }
  return host === '::1';
}

/**
 * Checks that an identity provider endpoint is https (plain http only on a loopback host, for
 * development and tests); answers whether it is plain http.
 */
export function checkEndpoint(value: string, expression: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(badRequest(`${expression} is not a URL: ${value}`, expression));
  }
  if (url.protocol === 'https:') {
    return false;
  }
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return true;
  }
  fail(
    badRequest(
      `${expression} must be an https URL (plain http is allowed only for loopback hosts): ${value}`,
      expression,
    ),
  );
}

/** openid-client's fetch, sent through the outbound policy instead of the global fetch. */
function outboundFetch(deps: AuthDeps): oidc.CustomFetch {
  return async (url, options) => {
    const body = options.body;
    let payload: string | Buffer | undefined;
    if (body === undefined || body === null) {
      payload = undefined;
    } else if (typeof body === 'string' || body instanceof URLSearchParams) {
      payload = body.toString();
    } else if (body instanceof Uint8Array || body instanceof ArrayBuffer) {
      payload = Buffer.from(body as Uint8Array);
    } else {
      throw new TypeError('Streamed request bodies are not sent to identity providers');
    }
    const response = await outboundRequest(deps.outbound, {
      url,
      method: options.method,
      headers: options.headers,
      body: payload,
      timeoutMs: deps.config.outboundTimeoutMs,
      // openid-client asks for redirect: 'manual'; a redirect is an error it reports itself.
      maxRedirects: 0,
      maxResponseBytes: 1_000_000,
    });
    const empty = response.status === 204 || response.status === 304;
    return new Response(empty ? null : new Uint8Array(response.body), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function clientAuthentication(idp: IdentityProviderConfig): oidc.ClientAuth {
  if (!idp.clientSecret) {
    return oidc.None();
  }
  return idp.tokenAuthMethod === 'client_secret_post'
    ? oidc.ClientSecretPost(idp.clientSecret)
    : oidc.ClientSecretBasic(idp.clientSecret);
}

async function discover(deps: AuthDeps, idp: IdentityProviderConfig, owner: IdpOwner): Promise<oidc.Configuration> {
  const at = `${owner}.identityProvider`;
  const issuer = idp.issuer as string;
  let insecure = checkEndpoint(issuer, `${at}.issuer`);
  const overrides: [keyof oidc.ServerMetadata, string | undefined, string][] = [
    ['authorization_endpoint', idp.authorizeUrl, 'authorizeUrl'],
    ['token_endpoint', idp.tokenUrl, 'tokenUrl'],
    ['userinfo_endpoint', idp.userInfoUrl, 'userInfoUrl'],
  ];
  for (const [, value, field] of overrides) {
    if (value) {
      insecure = checkEndpoint(value, `${at}.${field}`) || insecure;
    }
  }
  const fetchThroughPolicy = outboundFetch(deps);
  const options: oidc.DiscoveryRequestOptions = {
    [oidc.customFetch]: fetchThroughPolicy,
    timeout: Math.ceil(deps.config.outboundTimeoutMs / 1000),
    execute: insecure ? [oidc.allowInsecureRequests] : [],
  };
  let discovered: oidc.Configuration;
  try {
    discovered = await oidc.discovery(new URL(issuer), idp.clientId ?? '', undefined, undefined, options);
  } catch (err) {
    fail(badRequest(`OpenID Connect discovery at ${issuer} failed: ${idpErrorMessage(err)}`, `${at}.issuer`));
  }
  const metadata: oidc.ServerMetadata = { ...discovered.serverMetadata() };
  for (const [key, value] of overrides) {
    if (value) {
      (metadata as Record<string, unknown>)[key] = value;
    }
  }
  // The provider's own metadata must follow the same rule: an https issuer may not send its
  // tokens or keys over plain http.
  for (const key of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri'] as const) {
    const value = metadata[key];
    if (typeof value === 'string') {
      insecure = checkEndpoint(value, `${at}.issuer`) || insecure;
    }
  }
  if (!metadata.jwks_uri) {
    fail(badRequest(`The discovery document of ${issuer} names no jwks_uri to verify ID tokens with`, `${at}.issuer`));
  }
  if (!metadata.authorization_endpoint || !metadata.token_endpoint) {
    fail(badRequest(`The discovery document of ${issuer} names no authorization or token endpoint`, `${at}.issuer`));
  }
  const config = new oidc.Configuration(metadata, idp.clientId ?? '', undefined, clientAuthentication(idp));
  config[oidc.customFetch] = fetchThroughPolicy;
  config.timeout = options.timeout;
  if (insecure) {
    oidc.allowInsecureRequests(config);
  }
  // TLS to the token endpoint would let the issuer go unchecked by signature (OIDC Core 3.1.3.7);
  // verifying it as well costs one cached JWKS fetch and guards against a misrouted endpoint.
  oidc.enableNonRepudiationChecks(config);
  return config;
}

/** The provider's Configuration, from the cache when discovered within the last hour. */
export async function providerConfiguration(
  deps: AuthDeps,
  idp: IdentityProviderConfig,
  owner: IdpOwner,
): Promise<oidc.Configuration> {
  if (!idp.issuer) {
    fail(
      badRequest(
        'The identity provider has no issuer: set identityProvider.issuer to its OpenID Connect issuer ' +
          'so that its ID tokens can be verified',
        `${owner}.identityProvider.issuer`,
      ),
    );
  }
  if (!idp.clientId) {
    fail(badRequest('The identity provider has no clientId', `${owner}.identityProvider.clientId`));
  }
  let cache = caches.get(deps);
  if (!cache) {
    cache = new Map();
    caches.set(deps, cache);
  }
  const key = JSON.stringify([
    idp.issuer,
    idp.clientId,
    idp.clientSecret,
    idp.tokenAuthMethod,
    idp.authorizeUrl,
    idp.tokenUrl,
    idp.userInfoUrl,
  ]);
  const now = Date.now();
  const cached = cache.get(key);
  if (cached && cached.expires > now) {
    return cached.config;
  }
  const config = discover(deps, idp, owner);
  cache.delete(key);
  if (cache.size >= MAX_CACHED) {
    cache.delete(cache.keys().next().value as string);
  }
  cache.set(key, { config, expires: now + DISCOVERY_TTL_MS });
  // A failed discovery is not remembered: the next sign-in tries again.
  config.catch(() => {
    if (cache.get(key)?.config === config) {
      cache.delete(key);
    }
  });
  return config;
}

/** A readable reason from an openid-client error (its cause often says more). */
export function idpErrorMessage(err: unknown): string {
  const e = err as Error & { cause?: unknown; error?: string; error_description?: string };
  if (e.error) {
    return e.error_description ? `${e.error}: ${e.error_description}` : e.error;
  }
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  return cause && !e.message.includes(cause) ? `${e.message} (${cause})` : e.message;
}
