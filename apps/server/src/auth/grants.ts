import { isValidId } from '@hearth/core';
import { throwIfConnectionError } from '../platform/postgres.js';
import type { AuthDeps } from './deps.js';
import type { AuthenticatedClient } from './clients.js';
import { LOGIN_FLOW_MS } from './login-flow.js';
import { oauthFail } from './oauth-error.js';
import { generateSecret, s256, secretsEqual } from './passwords.js';
import { resolveMembership, type MembershipContext } from './session.js';
import { findLoginByCode, findMembershipsOfUser, readByReference } from './store.js';
import { REFRESH_TOKEN_TYP, signTokens, type RefreshClaims, type TokenResponse } from './tokens.js';
import { isKnownScope, splitScope } from './access/scopes.js';
import {
  loginExtension,
  PREVIOUS_REFRESH_SECRET_EXTENSION,
  REFRESH_ROTATED_AT_EXTENSION,
  type ClientApplication,
  type Login,
} from './types.js';

type Form = Record<string, string | undefined>;

/** Two refreshes of one token this close together are a client race, not a stolen token. */
const REFRESH_RACE_MS = 10_000;

async function writeLogin(deps: AuthDeps, login: Login, onConflict: string): Promise<Login> {
  try {
    const result = await deps.systemRepo().updateResource(login, { ifMatch: Number(login.meta?.versionId) });
    return result.resource;
  } catch (err) {
    if ((err as { status?: number }).status === 412) {
      oauthFail('invalid_grant', onConflict);
    }
    throw err;
  }
}

async function revoke(deps: AuthDeps, login: Login): Promise<void> {
  const current = await readByReference<Login>(deps.pool, `Login/${login.id}`);
  if (current && !current.revoked) {
    await deps.systemRepo().updateResource({ ...current, revoked: true });
  }
}

async function membershipOf(login: Login, deps: AuthDeps): Promise<MembershipContext> {
  try {
    return await resolveMembership(deps.pool, login.membership?.reference);
  } catch (err) {
    throwIfConnectionError(err);
    oauthFail('invalid_grant', (err as Error).message);
  }
}

/** grant_type=authorization_code (RFC 6749 §4.1.3) with PKCE (RFC 7636 §4.6). */
export async function authorizationCodeGrant(
  deps: AuthDeps,
  form: Form,
  auth: AuthenticatedClient | undefined,
): Promise<TokenResponse> {
  if (!form.code) {
    oauthFail('invalid_request', 'Missing code');
  }
  const login = await findLoginByCode(deps.pool, form.code);
  if (!login) {
    oauthFail('invalid_grant', 'Invalid code');
  }
  if (login.granted) {
    // A code used twice may have been stolen: revoke what it granted (RFC 6749 §4.1.2).
    await revoke(deps, login);
    oauthFail('invalid_grant', 'Code already used');
  }
  if (login.revoked) {
    oauthFail('invalid_grant', 'Login revoked');
  }
  if (Date.now() - new Date(login.authTime).getTime() > LOGIN_FLOW_MS) {
    oauthFail('invalid_grant', 'Code expired');
  }
  if (!login.membership) {
    oauthFail('invalid_grant', 'Login has no profile');
  }
  const loginClientId = login.client?.reference?.replace(/^ClientApplication\//, '');
  const requestClientId = auth?.client.id ?? form.client_id;
  if (loginClientId && requestClientId && requestClientId !== loginClientId) {
    oauthFail('invalid_grant', 'Code was issued to another client');
  }
  const redirect = login.redirectUri;
  if (redirect && form.redirect_uri !== redirect) {
    oauthFail('invalid_grant', 'redirect_uri does not match the authorization request');
  }
  const client = loginClientId
    ? await readByReference<ClientApplication>(deps.pool, login.client?.reference)
    : undefined;
  if (login.codeChallenge) {
    const verifier = form.code_verifier;
    if (!verifier) {
      oauthFail('invalid_request', 'Missing code_verifier');
    }
    const expected = login.codeChallengeMethod === 'S256' ? s256(verifier) : verifier;
    if (!secretsEqual(expected, login.codeChallenge)) {
      oauthFail('invalid_grant', 'Invalid code_verifier');
    }
  } else if (redirect) {
    // A code delivered by redirect can be intercepted: without PKCE only its confidential client may redeem it.
    const confidential = auth && auth.method !== 'none' && auth.client.id === loginClientId;
    if (!confidential && !client?.pkceOptional) {
      oauthFail(
        'invalid_grant',
        'PKCE required: the sign-in had no code challenge and the client did not authenticate',
      );
    }
  }
  const ctx = await membershipOf(login, deps);
  const granted = await writeLogin(deps, { ...login, granted: true }, 'Code already used');
  return signTokens(deps, granted, ctx, client);
}

/** grant_type=refresh_token (RFC 6749 §6): each use rotates the token; reusing an old one revokes the login. */
export async function refreshTokenGrant(
  deps: AuthDeps,
  form: Form,
  auth: AuthenticatedClient | undefined,
): Promise<TokenResponse> {
  if (!form.refresh_token) {
    oauthFail('invalid_request', 'Missing refresh_token');
  }
  let claims: RefreshClaims;
  try {
    claims = (await deps.keys.verify(form.refresh_token, { typ: REFRESH_TOKEN_TYP })) as RefreshClaims;
  } catch (err) {
    // invalid_grant tells the client to drop its refresh token: never for a database outage.
    throwIfConnectionError(err);
    oauthFail('invalid_grant', 'Invalid refresh token');
  }
  if (typeof claims.login_id !== 'string' || typeof claims.refresh_secret !== 'string' || !isValidId(claims.login_id)) {
    oauthFail('invalid_grant', 'Invalid refresh token');
  }
  const login = await readByReference<Login>(deps.pool, `Login/${claims.login_id}`);
  if (!login || login.revoked || !login.granted) {
    oauthFail('invalid_grant', 'Refresh token revoked');
  }
  const loginClientId = login.client?.reference?.replace(/^ClientApplication\//, '');
  const requestClientId = auth?.client.id ?? form.client_id;
  if (loginClientId && requestClientId && requestClientId !== loginClientId) {
    oauthFail('invalid_grant', 'Refresh token was issued to another client');
  }
  if (!secretsEqual(claims.refresh_secret, login.refreshSecret)) {
    const rotatedAtText = login.extension?.find((e) => e.url === REFRESH_ROTATED_AT_EXTENSION)?.valueInstant;
    const rotatedAt = rotatedAtText ? new Date(rotatedAtText).getTime() : 0;
    const previous = loginExtension(login, PREVIOUS_REFRESH_SECRET_EXTENSION);
    if (secretsEqual(claims.refresh_secret, previous) && Date.now() - rotatedAt < REFRESH_RACE_MS) {
      oauthFail('invalid_grant', 'Refresh token already used');
    }
    // A genuine but superseded token: someone else has the chain. Revoke it (OAuth 2.0 Security BCP §4.14.2).
    await revoke(deps, login);
    deps.logger.warn({ login: login.id }, 'refresh token reuse: login revoked');
    oauthFail('invalid_grant', 'Refresh token reuse detected: the session was revoked');
  }
  let scope = login.scope;
  if (form.scope) {
    // A refresh may narrow the scope, never widen it (RFC 6749 §6).
    const granted = new Set(splitScope(login.scope));
    scope = splitScope(form.scope)
      .filter((s) => granted.has(s))
      .join(' ');
  }
  const ctx = await membershipOf(login, deps);
  const rotated = await writeLogin(
    deps,
    {
      ...login,
      scope,
      refreshSecret: generateSecret(32),
      extension: [
        ...(login.extension ?? []).filter(
          (e) => e.url !== PREVIOUS_REFRESH_SECRET_EXTENSION && e.url !== REFRESH_ROTATED_AT_EXTENSION,
        ),
        { url: PREVIOUS_REFRESH_SECRET_EXTENSION, valueString: login.refreshSecret },
        { url: REFRESH_ROTATED_AT_EXTENSION, valueInstant: new Date().toISOString() },
      ],
    },
    'Refresh token already used',
  );
  const client = loginClientId
    ? await readByReference<ClientApplication>(deps.pool, login.client?.reference)
    : undefined;
  return signTokens(deps, rotated, ctx, client);
}

/** grant_type=client_credentials (RFC 6749 §4.4): the client acts through its own project membership. */
export async function clientCredentialsGrant(
  deps: AuthDeps,
  form: Form,
  auth: AuthenticatedClient | undefined,
  remoteAddress?: string,
): Promise<TokenResponse> {
  if (!auth || auth.method === 'none') {
    oauthFail('invalid_client', 'Client authentication required (client_secret, HTTP Basic, or client_assertion)');
  }
  const client = auth.client;
  const memberships = await findMembershipsOfUser(deps.pool, `ClientApplication/${client.id}`, client.meta?.project);
  const membership = memberships.find((m) => m.active !== false);
  if (!membership) {
    oauthFail('unauthorized_client', 'Client has no active project membership');
  }
  const scope =
    splitScope(form.scope ?? 'openid')
      .filter(isKnownScope)
      .join(' ') || 'openid';
  const ctx = await resolveMembership(deps.pool, `ProjectMembership/${membership.id}`).catch((err: Error) =>
    oauthFail('unauthorized_client', err.message),
  );
  const created = await deps.systemRepo().createResource<Login>({
    resourceType: 'Login',
    user: { reference: `ClientApplication/${client.id}` },
    client: { reference: `ClientApplication/${client.id}` },
    membership: { reference: `ProjectMembership/${membership.id}` },
    project: { reference: `Project/${ctx.project.id}` },
    profileType: 'ClientApplication',
    authMethod: 'client',
    authTime: new Date().toISOString(),
    scope,
    granted: true,
    superAdmin: ctx.project.superAdmin === true,
    admin: membership.admin === true,
    ...(remoteAddress ? { remoteAddress } : {}),
  });
  return signTokens(deps, created.resource, ctx, client);
}
