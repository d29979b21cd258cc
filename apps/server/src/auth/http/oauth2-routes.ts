import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allOk, forbiddenWith, fail } from '@hearth/core';
import type { AuthModule } from '../module.js';
import { assertAdminScope } from '../access/admin-scope.js';
import { authenticateClient, parseBasicAuth } from '../clients.js';
import { authorizationCodeGrant, clientCredentialsGrant, refreshTokenGrant } from '../grants.js';
import { OAuthError, oauthFail } from '../oauth-error.js';
import { auditLogin } from '../audit.js';
import { hasScope } from '../access/scopes.js';
import { createClient } from '../projects.js';
import { readByReference } from '../store.js';
import { REFRESH_TOKEN_TYP, type RefreshClaims } from '../tokens.js';
import { tokenExchangeGrant } from '../external-idp.js';
import type { Login, User } from '../types.js';
import { objectBody, requestInfo, sendNoStore } from './common.js';
import { endSession, endSessionFields } from './end-session.js';

type Form = Record<string, string | undefined>;

function formOf(request: FastifyRequest): Form {
  const body = objectBody(request);
  const form: Form = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === 'string') {
      form[k] = v;
    } else if (typeof v === 'number' || typeof v === 'boolean') {
      form[k] = String(v);
    }
  }
  return form;
}

/** The absolute URL of this token endpoint as the client addressed it (audience of client assertions). */
function tokenEndpointOf(auth: AuthModule, request: FastifyRequest): string {
  const path = request.url.split('?')[0].replace(/^\//, '');
  return auth.deps.config.baseUrl + path;
}

/** The client a token request claims to be (for the audit trail of a failed client sign-in). */
function clientNamed(form: Form, authorization: string | undefined): string {
  const named = parseBasicAuth(authorization)?.id ?? form.client_id;
  if (named) {
    return `client ${named.slice(0, 100)}`;
  }
  return form.client_assertion ? 'client assertion' : 'unknown client';
}

/** The OAuth 2.0 and OpenID Connect endpoints under /oauth2. */
export async function oauth2Routes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const deps = auth.deps;

  app.post('/oauth2/token', async (request, reply) => {
    const form = formOf(request);
    const info = requestInfo(request);
    let client;
    try {
      client = await authenticateClient(deps, form, request.headers.authorization, tokenEndpointOf(auth, request));
    } catch (err) {
      // A wrong client secret or assertion is a failed sign-in of that client.
      if (err instanceof OAuthError && err.code === 'invalid_client') {
        await auditLogin(deps, {
          outcome: 'failure',
          email: clientNamed(form, request.headers.authorization),
          method: 'client',
          reason: err.description,
          ...info,
        });
      }
      throw err;
    }
    let tokens;
    switch (form.grant_type) {
      case 'authorization_code':
        tokens = await authorizationCodeGrant(deps, form, client);
        break;
      case 'refresh_token':
        tokens = await refreshTokenGrant(deps, form, client);
        break;
      case 'client_credentials':
        tokens = await clientCredentialsGrant(deps, form, client, request.ip);
        await auditLogin(deps, {
          outcome: 'success',
          clientId: client?.client.id,
          email: client?.client.name,
          projectId: tokens.project.reference?.replace(/^Project\//, ''),
          method: client?.method ?? 'client',
          ...info,
        });
        break;
      case 'urn:ietf:params:oauth:grant-type:token-exchange':
        tokens = await tokenExchangeGrant(deps, form, client, request.ip);
        break;
      case undefined:
        oauthFail('invalid_request', 'Missing grant_type');
        break;
      default:
        oauthFail('unsupported_grant_type', `Unsupported grant_type: ${form.grant_type}`);
    }
    return sendNoStore(reply, 200, tokens);
  });

  const userinfo = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await auth.authenticator.require(request);
    const user = caller.user as User;
    const scope = caller.scope;
    const info: Record<string, unknown> = { sub: user.id };
    if (hasScope(scope, 'profile') || hasScope(scope, 'fhirUser') || hasScope(scope, 'openid')) {
      info.fhirUser = `${deps.config.baseUrl}fhir/R4/${caller.profile.reference}`;
      info.profile = caller.profile.reference;
    }
    if (hasScope(scope, 'profile') && user.resourceType === 'User') {
      info.name = [user.firstName, user.lastName].filter(Boolean).join(' ');
      info.given_name = user.firstName;
      info.family_name = user.lastName;
    }
    if ((hasScope(scope, 'email') || hasScope(scope, 'profile')) && user.email) {
      info.email = user.email;
      info.email_verified = user.emailVerified === true;
    }
    return sendNoStore(reply, 200, info);
  };
  app.get('/oauth2/userinfo', userinfo);
  app.post('/oauth2/userinfo', userinfo);

  // Logout revokes the login behind the token: its access and refresh tokens stop working.
  // Without a bearer token, a browser sent by its app with an ID token (OIDC RP-initiated logout).
  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    const fields = endSessionFields(request);
    if (!request.headers.authorization && fields.id_token_hint) {
      return endSession(deps, fields, reply, () => auth.authenticator.invalidate());
    }
    const caller = await auth.authenticator.require(request);
    if (caller.login.id) {
      const current = await readByReference<Login>(deps.pool, `Login/${caller.login.id}`);
      if (current && !current.revoked) {
        await deps.systemRepo().updateResource({ ...current, revoked: true });
      }
    }
    auth.authenticator.invalidate();
    return reply.header('cache-control', 'no-store').send(allOk);
  };
  app.get('/oauth2/logout', logout);
  app.post('/oauth2/logout', logout);

  // RFC 7662: the caller is a client (any authentication) or a signed-in user asking about a token.
  app.post('/oauth2/introspect', async (request, reply) => {
    const form = formOf(request);
    const client =
      request.headers.authorization?.match(/^basic /i) || form.client_id
        ? await authenticateClient(deps, form, request.headers.authorization, tokenEndpointOf(auth, request))
        : undefined;
    if (!client || client.method === 'none') {
      await auth.authenticator.require(request);
    }
    if (!form.token) {
      oauthFail('invalid_request', 'Missing token');
    }
    return sendNoStore(reply, 200, await introspect(auth, form.token));
  });

  // RFC 7591 dynamic client registration, into the caller's project (project admins only).
  app.post('/oauth2/register', async (request, reply) => {
    const caller = await auth.authenticator.require(request);
    if (!caller.projectAdmin && !caller.superAdmin) {
      fail(forbiddenWith('Only project admins may register clients'));
    }
    assertAdminScope(caller);
    const body = objectBody(request);
    const redirectUris = body.redirect_uris;
    if (
      redirectUris !== undefined &&
      (!Array.isArray(redirectUris) ||
        !redirectUris.every((u) => typeof u === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(u)))
    ) {
      oauthFail('invalid_redirect_uri', 'redirect_uris must be an array of absolute URIs');
    }
    const name = typeof body.client_name === 'string' ? body.client_name : 'Registered client';
    const jwksUri = typeof body.jwks_uri === 'string' ? body.jwks_uri : undefined;
    const { client } = await createClient(deps, caller.project.id as string, {
      name,
      redirectUris: redirectUris as string[] | undefined,
      jwksUri,
    });
    const method =
      typeof body.token_endpoint_auth_method === 'string'
        ? body.token_endpoint_auth_method
        : jwksUri
          ? 'private_key_jwt'
          : 'client_secret_basic';
    return sendNoStore(reply, 201, {
      client_id: client.id,
      client_secret: method === 'private_key_jwt' || method === 'none' ? undefined : client.secret,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      client_secret_expires_at: 0,
      client_name: client.name,
      redirect_uris: client.redirectUris ?? [],
      token_endpoint_auth_method: method,
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      response_types: ['code'],
      ...(jwksUri ? { jwks_uri: jwksUri } : {}),
    });
  });
}

async function introspect(auth: AuthModule, token: string): Promise<Record<string, unknown>> {
  try {
    const caller = await auth.authenticator.fromAccessToken(token);
    const claims = await auth.deps.keys.verify(token);
    return {
      active: true,
      token_type: 'Bearer',
      scope: caller.scope,
      client_id: caller.client?.id,
      username: (caller.user as User).email ?? caller.user.id,
      sub: caller.user.id,
      iss: claims.iss,
      exp: claims.exp,
      iat: claims.iat,
      profile: caller.profile.reference,
      ...(caller.patient ? { patient: caller.patient.replace(/^Patient\//, '') } : {}),
    };
  } catch {
    // Not a live access token: maybe a live refresh token.
  }
  try {
    const claims = (await auth.deps.keys.verify(token, { typ: REFRESH_TOKEN_TYP })) as RefreshClaims;
    const login = await readByReference<Login>(auth.deps.pool, `Login/${claims.login_id}`);
    if (login && !login.revoked && login.refreshSecret === claims.refresh_secret) {
      return {
        active: true,
        token_type: 'refresh_token',
        scope: login.scope,
        exp: claims.exp,
        iat: claims.iat,
        sub: login.user.reference?.split('/')[1],
      };
    }
  } catch {
    // Neither: inactive.
  }
  return { active: false };
}
