import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { badRequest, fail, isValidId } from '@hearth/core';
import type { AuthDeps } from '../deps.js';
import { registeredRedirectUris } from '../login-flow.js';
import { readByReference } from '../store.js';
import type { ClientApplication, Login } from '../types.js';

/** The parameters of an RP-initiated logout (openid.net/specs/openid-connect-rpinitiated-1_0.html §2). */
export interface EndSessionRequest {
  id_token_hint?: string;
  post_logout_redirect_uri?: string;
  client_id?: string;
  state?: string;
}

/** The logout parameters from the query (GET) or form (POST); only strings count. */
export function endSessionFields(request: FastifyRequest): EndSessionRequest {
  const source = (request.method === 'GET' ? request.query : request.body) as Record<string, unknown> | undefined;
  const pick = (name: keyof EndSessionRequest) => {
    const value = source && typeof source === 'object' ? source[name] : undefined;
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  return {
    id_token_hint: pick('id_token_hint'),
    post_logout_redirect_uri: pick('post_logout_redirect_uri'),
    client_id: pick('client_id'),
    state: pick('state'),
  };
}

/**
 * Verifies an ID token this server issued. An expired one is still a valid hint (the spec: the OP
 * should accept it), so its signature is checked as of its issue time; access and refresh tokens
 * (typ at+jwt, refresh+jwt) are not ID tokens.
 */
async function verifyIdTokenHint(deps: AuthDeps, token: string): Promise<{ loginId: string; audience?: string }> {
  let issuedAt: number | undefined;
  try {
    issuedAt = decodeJwt(token).iat;
  } catch {
    fail(badRequest('id_token_hint is not a JWT', 'id_token_hint'));
  }
  let claims;
  try {
    claims = await deps.keys.verify(token, {
      typ: 'JWT',
      ...(issuedAt !== undefined ? { currentDate: new Date(issuedAt * 1000) } : {}),
    });
  } catch {
    fail(badRequest('id_token_hint is not an ID token issued by this server', 'id_token_hint'));
  }
  const loginId = claims.login_id;
  if (typeof loginId !== 'string' || !isValidId(loginId)) {
    fail(badRequest('id_token_hint is not an ID token issued by this server', 'id_token_hint'));
  }
  const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
  return { loginId, audience: aud };
}

/**
 * RP-initiated logout from a browser: the relying party sends the user here with the ID token it
 * holds. The session behind it is revoked; the user goes back to `post_logout_redirect_uri` when
 * that is a redirect URI registered for the client the ID token was issued to, else sees a page.
 */
export async function endSession(
  deps: AuthDeps,
  fields: EndSessionRequest,
  reply: FastifyReply,
  onRevoked: () => void,
): Promise<FastifyReply> {
  const hint = await verifyIdTokenHint(deps, fields.id_token_hint as string);
  if (fields.client_id && hint.audience && fields.client_id !== hint.audience) {
    fail(badRequest('client_id is not the audience of id_token_hint', 'client_id'));
  }
  let redirect: string | undefined;
  if (fields.post_logout_redirect_uri) {
    const clientId = fields.client_id ?? hint.audience;
    const client =
      clientId && isValidId(clientId)
        ? await readByReference<ClientApplication>(deps.pool, `ClientApplication/${clientId}`)
        : undefined;
    if (!client || !registeredRedirectUris(client).includes(fields.post_logout_redirect_uri)) {
      // Never redirect to an address the client did not register (an open redirector otherwise).
      fail(
        badRequest(
          'post_logout_redirect_uri does not match a redirect URI registered for the client',
          'post_logout_redirect_uri',
        ),
      );
    }
    redirect = fields.post_logout_redirect_uri;
  }
  const login = await readByReference<Login>(deps.pool, `Login/${hint.loginId}`);
  if (login && !login.revoked) {
    await deps.systemRepo().updateResource({ ...login, revoked: true });
  }
  onRevoked();
  reply.header('cache-control', 'no-store');
  if (redirect) {
    const url = new URL(redirect);
    if (fields.state) {
      url.searchParams.set('state', fields.state);
    }
    return reply.redirect(url.toString(), 302);
  }
  return reply
    .code(200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
    .send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed out</title></head>' +
        '<body style="font-family:system-ui,sans-serif;text-align:center;padding-top:10vh">' +
        '<h1>You are signed out</h1><p>You can close this window.</p></body></html>',
    );
}
