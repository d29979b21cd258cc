import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { outboundRequest } from '../platform/outbound-http.js';
import { isValidId } from '@hearth/core';
import type { AuthDeps } from './deps.js';
import { oauthFail } from './oauth-error.js';
import { secretsEqual } from './passwords.js';
import { readByReference } from './store.js';
import type { ClientApplication } from './types.js';

export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export interface AuthenticatedClient {
  client: ClientApplication;
  /** How the client proved itself; 'none' is a public client that only named itself. */
  method: 'client_secret_post' | 'client_secret_basic' | 'private_key_jwt' | 'none';
}

/** Client credentials from an Authorization: Basic header (RFC 6749 §2.3.1: form-encoded id and secret). */
export function parseBasicAuth(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header || !/^basic /i.test(header)) {
    return undefined;
  }
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) {
    return undefined;
  }
  try {
    return { id: decodeURIComponent(decoded.slice(0, i)), secret: decodeURIComponent(decoded.slice(i + 1)) };
  } catch {
    return { id: decoded.slice(0, i), secret: decoded.slice(i + 1) };
  }
}

async function readClient(deps: AuthDeps, id: string | undefined): Promise<ClientApplication> {
  const client =
    id && isValidId(id) ? await readByReference<ClientApplication>(deps.pool, `ClientApplication/${id}`) : undefined;
  if (!client) {
    oauthFail('invalid_client', 'Client not found');
  }
  if (client.status && client.status !== 'active') {
    oauthFail('invalid_client', 'Client application is not active');
  }
  return client;
}

export function clientSecretMatches(client: ClientApplication, secret: string): boolean {
  return (
    secretsEqual(secret, client.secret) ||
    (client.retiringSecret !== undefined && secretsEqual(secret, client.retiringSecret))
  );
}

const remoteKeySets = new Map<string, { keys: JWTVerifyGetKey; fetchedAt: number }>();

/** A client's public keys from its jwksUri, through the outbound policy, cached for 5 minutes. */
export async function fetchKeySet(deps: AuthDeps, url: string): Promise<JWTVerifyGetKey> {
  const cached = remoteKeySets.get(url);
  if (cached && Date.now() - cached.fetchedAt < 300_000) {
    return cached.keys;
  }
  let jwks: JSONWebKeySet;
  try {
    const response = await outboundRequest(deps.outbound, {
      url,
      timeoutMs: deps.config.outboundTimeoutMs,
      maxResponseBytes: 1_000_000,
    });
    if (response.status !== 200) {
      throw new Error(`HTTP ${response.status}`);
    }
    jwks = JSON.parse(response.body.toString('utf8')) as JSONWebKeySet;
  } catch (err) {
    oauthFail('invalid_client', `Could not read the keys at ${url}: ${(err as Error).message}`);
  }
  const keys = createLocalJWKSet(jwks);
  remoteKeySets.set(url, { keys, fetchedAt: Date.now() });
  return keys;
}

/**
 * Authenticates the client of a token request by secret (form or HTTP Basic) or by a signed
 * assertion (private_key_jwt, RFC 7523 §2.2, keys from the client's jwksUri). Returns undefined
 * when the request names no client at all.
 */
export async function authenticateClient(
  deps: AuthDeps,
  form: Record<string, string | undefined>,
  authorization: string | undefined,
  tokenEndpoint: string,
): Promise<AuthenticatedClient | undefined> {
  const basic = parseBasicAuth(authorization);
  if (basic) {
    if (form.client_id && form.client_id !== basic.id) {
      oauthFail('invalid_request', 'client_id does not match the Authorization header');
    }
    const client = await readClient(deps, basic.id);
    if (!clientSecretMatches(client, basic.secret)) {
      oauthFail('invalid_client', 'Invalid client secret');
    }
    return { client, method: 'client_secret_basic' };
  }
  if (form.client_assertion || form.client_assertion_type) {
    if (form.client_assertion_type !== JWT_BEARER_ASSERTION) {
      oauthFail('invalid_request', `client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
    }
    return {
      client: await verifyClientAssertion(deps, form.client_assertion ?? '', form.client_id, tokenEndpoint),
      method: 'private_key_jwt',
    };
  }
  if (form.client_secret !== undefined) {
    const client = await readClient(deps, form.client_id);
    if (!clientSecretMatches(client, form.client_secret)) {
      oauthFail('invalid_client', 'Invalid client secret');
    }
    return { client, method: 'client_secret_post' };
  }
  if (form.client_id) {
    return { client: await readClient(deps, form.client_id), method: 'none' };
  }
  return undefined;
}

async function verifyClientAssertion(
  deps: AuthDeps,
  assertion: string,
  clientIdParam: string | undefined,
  tokenEndpoint: string,
): Promise<ClientApplication> {
  let claims;
  try {
    claims = decodeJwt(assertion);
  } catch {
    oauthFail('invalid_client', 'client_assertion is not a JWT');
  }
  const clientId = claims.sub ?? claims.iss;
  if (!clientId || claims.iss !== claims.sub || (clientIdParam && clientIdParam !== clientId)) {
    oauthFail('invalid_client', 'client_assertion iss and sub must both be the client id');
  }
  const client = await readClient(deps, clientId);
  if (!client.jwksUri) {
    oauthFail('invalid_client', 'Client has no jwksUri for private_key_jwt');
  }
  const keySet = await fetchKeySet(deps, client.jwksUri);
  try {
    // The audience is the token endpoint (RFC 7523 §3); SMART backend services allow the same.
    const audiences = [tokenEndpoint, tokenEndpoint.replace('/api/', '/'), deps.config.baseUrl + 'oauth2/token'];
    const { payload } = await jwtVerify(assertion, keySet, { audience: audiences, maxTokenAge: '10m' });
    if (!payload.exp) {
      oauthFail('invalid_client', 'client_assertion must expire (exp)');
    }
    // SMART Backend Services require a jti, which is what makes a replayed assertion detectable.
    if (!payload.jti) {
      oauthFail('invalid_client', 'client_assertion must have a jti');
    }
    if (!(await rememberJti(deps, clientId, payload.jti, payload.exp))) {
      oauthFail('invalid_client', 'client_assertion was already used (jti)');
    }
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('ERR_')) {
      oauthFail('invalid_client', `Invalid client_assertion: ${(err as Error).message}`);
    }
    throw err;
  }
  return client;
}

/** Records an assertion's jti until it expires; false when it was seen before (replay). */
async function rememberJti(deps: AuthDeps, clientId: string, jti: string, exp: number): Promise<boolean> {
  const result = await deps.pool.query(
    `INSERT INTO hearth_rate_counter (key, window_start, count) VALUES ($1, to_timestamp($2), 1)
     ON CONFLICT DO NOTHING`,
    [`jti:${clientId}:${jti}`, exp],
  );
  return result.rowCount === 1;
}
