import * as oidc from 'openid-client';
import { badRequest, fail, forbiddenWith, isValidId } from '@hearth/core';
import { outboundRequest } from '../platform/outbound-http.js';
import type { AuthDeps } from './deps.js';
import { appBaseUrl } from './deps.js';
import type { AuthenticatedClient } from './clients.js';
import { auditLogin } from './audit.js';
import { checkLoginParams, loadClient, startLogin, type LoginParams, type RequestInfo } from './login-flow.js';
import { oauthFail } from './oauth-error.js';
import { checkEndpoint, idpErrorMessage, providerConfiguration, type IdpOwner } from './external-idp-client.js';
import { isKnownScope, splitScope } from './access/scopes.js';
import { resolveMembership } from './session.js';
import { findDomainConfiguration, findMembershipsOfUser, findUserByEmail } from './store.js';
import { signTokens, type TokenResponse } from './tokens.js';
import type { ClientApplication, IdentityProviderConfig, Login, LoginResponse, User } from './types.js';

const PENDING_TYP = 'external-signin+jwt';
/** How long a sign-in may stay at the identity provider. */
export const PENDING_LIFETIME = 600;
/** The browser cookie that holds a pending external sign-in, one per `state`. */
export const PENDING_COOKIE_PREFIX = 'hearth-idp-';

/**
 * A sign-in on its way through the external IdP. It is signed and kept in an HttpOnly cookie of
 * the browser that started it, never in the URL: the PKCE verifier and nonce stay secret from
 * whoever sees the redirect, and a code injected into another browser finds no matching sign-in.
 */
interface PendingSignIn {
  domain?: string;
  clientId?: string;
  params: LoginParams;
  /** The `state`, `nonce` and PKCE verifier sent to the IdP, checked on its answer. */
  state: string;
  nonce: string;
  verifier?: string;
  /** The state the client passed, returned with the final redirect. */
  clientState?: string;
}

/** What the HTTP layer sets as a cookie before redirecting to the IdP. */
export interface PendingCookie {
  name: string;
  value: string;
  maxAgeSeconds: number;
}

async function idpJson(
  deps: AuthDeps,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Record<string, unknown>> {
  let response;
  try {
    response = await outboundRequest(deps.outbound, {
      url,
      ...init,
      timeoutMs: deps.config.outboundTimeoutMs,
      maxResponseBytes: 1_000_000,
    });
  } catch (err) {
    fail(badRequest(`Identity provider not reachable: ${(err as Error).message}`));
  }
  if (response.status < 200 || response.status >= 300) {
    fail(badRequest(`Identity provider answered HTTP ${response.status}`));
  }
  try {
    return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    fail(badRequest('Identity provider answered with something other than JSON'));
  }
}

/** The external IdP of a sign-in: the email domain's (DomainConfiguration) or the client's own. */
async function identityProvider(
  deps: AuthDeps,
  state: Pick<PendingSignIn, 'domain' | 'clientId'>,
): Promise<{ idp: IdentityProviderConfig; owner: IdpOwner; client?: ClientApplication }> {
  if (state.domain) {
    const config = await findDomainConfiguration(deps.pool, state.domain);
    if (!config?.identityProvider || !usesExternalSignIn(config.identityProvider)) {
      fail(badRequest(`No identity provider is configured for ${state.domain}`, 'domain'));
    }
    return {
      idp: config.identityProvider,
      owner: 'DomainConfiguration',
      client: await loadClient(deps, state.clientId),
    };
  }
  const client = await loadClient(deps, state.clientId);
  if (!client?.identityProvider || !usesExternalSignIn(client.identityProvider)) {
    fail(badRequest('The client has no identity provider', 'clientId'));
  }
  return { idp: client.identityProvider, owner: 'ClientApplication', client };
}

/** Whether an IdP configuration is meant for browser sign-in (not only token exchange). */
export function usesExternalSignIn(idp: IdentityProviderConfig): boolean {
  return Boolean(idp.issuer || idp.authorizeUrl);
}

function callbackUrl(deps: AuthDeps): string {
  return `${deps.config.baseUrl}auth/external`;
}

/**
 * GET /auth/external/start: where to send the browser to sign in with the external IdP, and the
 * cookie that remembers the pending sign-in in that browser.
 */
export async function externalStart(
  deps: AuthDeps,
  query: Record<string, string | undefined>,
): Promise<{ url: string; cookie: PendingCookie }> {
  const params: LoginParams = {
    projectId: query.projectId,
    clientId: query.clientId,
    scope: query.scope,
    nonce: query.nonce,
    codeChallenge: query.codeChallenge,
    codeChallengeMethod: query.codeChallengeMethod,
    redirectUri: query.redirectUri,
    launch: query.launch,
  };
  const domain = query.domain?.toLowerCase();
  const { idp, owner, client } = await identityProvider(deps, { domain, clientId: query.clientId });
  checkLoginParams(params, client);
  const config = await providerConfiguration(deps, idp, owner);
  const pending: PendingSignIn = {
    domain,
    clientId: query.clientId,
    params,
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    clientState: query.state,
  };
  const authorize: Record<string, string> = {
    redirect_uri: callbackUrl(deps),
    scope: 'openid email profile',
    state: pending.state,
    nonce: pending.nonce,
  };
  // PKCE whenever the provider says it supports it, and always when the configuration asks.
  if (idp.usePkce || config.serverMetadata().supportsPKCE()) {
    pending.verifier = oidc.randomPKCECodeVerifier();
    authorize.code_challenge = await oidc.calculatePKCECodeChallenge(pending.verifier);
    authorize.code_challenge_method = 'S256';
  }
  const url = oidc.buildAuthorizationUrl(config, authorize).toString();
  const value = await deps.keys.sign({ ...pending }, PENDING_LIFETIME, PENDING_TYP);
  return { url, cookie: { name: PENDING_COOKIE_PREFIX + pending.state, value, maxAgeSeconds: PENDING_LIFETIME } };
}

/** The pending sign-in the IdP's answer belongs to, from the cookie named by its `state`. */
async function pendingSignIn(
  deps: AuthDeps,
  state: string,
  cookies: Record<string, string | undefined>,
): Promise<PendingSignIn> {
  const cookie = cookies[PENDING_COOKIE_PREFIX + state];
  if (!cookie) {
    fail(
      badRequest(
        'No sign-in with this identity provider was started in this browser, or it took longer than ' +
          `${PENDING_LIFETIME / 60} minutes: start again`,
        'state',
      ),
    );
  }
  let pending: PendingSignIn;
  try {
    pending = (await deps.keys.verify(cookie, { typ: PENDING_TYP })) as unknown as PendingSignIn;
  } catch {
    fail(badRequest('Invalid or expired sign-in: start again', 'state'));
  }
  if (pending.state !== state) {
    fail(badRequest('The state does not match the sign-in started in this browser', 'state'));
  }
  return pending;
}

/**
 * The identity claims the IdP vouched for: its ID token, verified by openid-client (signature
 * against the provider's JWKS, `iss`, `aud`, `azp`, `exp`, `iat`, and the `nonce` we sent), and
 * its userinfo when configured or when the ID token does not carry the email we match on.
 */
async function identityClaims(
  config: oidc.Configuration,
  idp: IdentityProviderConfig,
  callback: URL,
  pending: PendingSignIn,
): Promise<Record<string, unknown>> {
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(config, callback, {
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      pkceCodeVerifier: pending.verifier,
      idTokenExpected: true,
    });
  } catch (err) {
    fail(badRequest(`The identity provider's answer was refused: ${idpErrorMessage(err)}`));
  }
  const claims: Record<string, unknown> = { ...tokens.claims() };
  const userinfo = config.serverMetadata().userinfo_endpoint;
  const needsUserInfo = idp.userInfoUrl || (!idp.useSubject && typeof claims.email !== 'string');
  if (needsUserInfo && userinfo && tokens.access_token) {
    try {
      // The userinfo must be about the same subject as the ID token (OIDC Core 5.3.2).
      Object.assign(claims, await oidc.fetchUserInfo(config, tokens.access_token, claims.sub as string), {
        sub: claims.sub,
      });
    } catch (err) {
      fail(badRequest(`The identity provider's userinfo was refused: ${idpErrorMessage(err)}`));
    }
  }
  return claims;
}

/** The user an identity provider vouched for: by subject (useSubject) or verified email in the allowed domain. */
async function userFor(
  deps: AuthDeps,
  idp: IdentityProviderConfig,
  claims: Record<string, unknown>,
  domain: string | undefined,
  projectId: string | undefined,
): Promise<User> {
  if (idp.useSubject) {
    const sub = claims.sub;
    if (typeof sub !== 'string' || !sub) {
      fail(badRequest('Identity provider returned no subject'));
    }
    const result = await deps.pool.query<{ content: string }>(
      `SELECT content FROM "User" WHERE nullif(content, '')::jsonb->>'externalId' = $1 AND NOT deleted`,
      [sub],
    );
    const users = result.rows.map((r) => JSON.parse(r.content) as User);
    const user =
      users.find((u) => (projectId ? u.project?.reference === `Project/${projectId}` : false)) ??
      users.find((u) => !u.project);
    if (!user) {
      fail(badRequest('User not found'));
    }
    return user;
  }
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
  if (!email) {
    fail(badRequest('Identity provider returned no email'));
  }
  if (claims.email_verified === false) {
    fail(badRequest('Identity provider says the email is not verified'));
  }
  if (domain && !email.endsWith(`@${domain}`)) {
    // An IdP speaks for its own domain only; it must not sign in users of another.
    fail(forbiddenWith(`The identity provider of ${domain} cannot sign in ${email}`));
  }
  const user = await findUserByEmail(deps.pool, email, projectId);
  if (!user) {
    fail(badRequest('User not found'));
  }
  return user;
}

/**
 * GET /auth/external?code&state: finishes the external sign-in; returns where to redirect the
 * browser and which cookie to clear.
 */
export async function externalCallback(
  deps: AuthDeps,
  query: Record<string, string | undefined>,
  cookies: Record<string, string | undefined>,
  info: RequestInfo,
): Promise<{ url: string; clearCookie?: string }> {
  if (query.error) {
    fail(badRequest(`Identity provider error: ${query.error_description ?? query.error}`));
  }
  if (!query.code || !query.state) {
    fail(badRequest('Missing code or state'));
  }
  const state = await pendingSignIn(deps, query.state, cookies);
  const { idp, owner, client } = await identityProvider(deps, state);
  const config = await providerConfiguration(deps, idp, owner);
  const callback = new URL(callbackUrl(deps));
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) {
      callback.searchParams.set(name, value);
    }
  }
  const claims = await identityClaims(config, idp, callback, state);
  const projectId = state.params.projectId ?? (state.domain ? undefined : client?.meta?.project);
  let user: User;
  try {
    user = await userFor(deps, idp, claims, state.domain, projectId);
  } catch (err) {
    await auditLogin(deps, {
      outcome: 'failure',
      email: String(claims.email ?? claims.sub ?? ''),
      method: 'external',
      reason: (err as Error).message,
      ...info,
    });
    throw err;
  }
  await auditLogin(deps, { outcome: 'success', email: user.email, userId: user.id, method: 'external', ...info });
  const result = await startLogin(deps, { user, authMethod: 'external', params: state.params, client, info });
  return { url: finalRedirect(deps, state, result), clearCookie: PENDING_COOKIE_PREFIX + state.state };
}

function finalRedirect(deps: AuthDeps, state: PendingSignIn, result: LoginResponse): string {
  const url = new URL(state.params.redirectUri ?? `${appBaseUrl(deps.config)}signin`);
  url.searchParams.set('login', result.login);
  if (result.code) {
    url.searchParams.set('code', result.code);
  }
  if (result.mfaRequired) {
    url.searchParams.set('mfaRequired', 'true');
  }
  if (state.clientState) {
    url.searchParams.set('state', state.clientState);
  }
  return url.toString();
}

/**
 * Token exchange (RFC 8693): a client whose identityProvider has a userinfo endpoint trades an
 * access token of that IdP for a Hearth token of the same user in the client's project.
 */
export async function tokenExchangeGrant(
  deps: AuthDeps,
  form: Record<string, string | undefined>,
  auth: AuthenticatedClient | undefined,
  remoteAddress?: string,
): Promise<TokenResponse> {
  if (!auth) {
    oauthFail('invalid_request', 'Token exchange needs a client_id');
  }
  if (!form.subject_token) {
    oauthFail('invalid_request', 'Missing subject_token');
  }
  if (form.subject_token_type && form.subject_token_type !== 'urn:ietf:params:oauth:token-type:access_token') {
    oauthFail('invalid_request', 'subject_token_type must be urn:ietf:params:oauth:token-type:access_token');
  }
  const client = auth.client;
  const idp = client.identityProvider;
  if (!idp?.userInfoUrl) {
    oauthFail('unauthorized_client', 'The client has no identity provider with a userinfo endpoint');
  }
  try {
    // The subject token is a bearer credential: it goes to the provider over TLS only.
    checkEndpoint(idp.userInfoUrl, 'ClientApplication.identityProvider.userInfoUrl');
  } catch (err) {
    oauthFail('unauthorized_client', (err as Error).message);
  }
  const projectId = client.meta?.project as string;
  let user: User;
  try {
    const claims = await idpJson(deps, idp.userInfoUrl, {
      headers: { authorization: `Bearer ${form.subject_token}`, accept: 'application/json' },
    });
    user = await userFor(deps, idp, claims, undefined, projectId);
  } catch (err) {
    oauthFail('invalid_grant', (err as Error).message);
  }
  const membership = (await findMembershipsOfUser(deps.pool, `User/${user.id}`, projectId)).find(
    (m) => m.active !== false,
  );
  if (!membership || !isValidId(membership.id)) {
    oauthFail('invalid_grant', "User is not a member of the client's project");
  }
  const ctx = await resolveMembership(deps.pool, `ProjectMembership/${membership.id}`).catch((err: Error) =>
    oauthFail('invalid_grant', err.message),
  );
  const scope =
    splitScope(form.scope ?? 'openid')
      .filter(isKnownScope)
      .join(' ') || 'openid';
  const login = (
    await deps.systemRepo().createResource<Login>({
      resourceType: 'Login',
      user: { reference: `User/${user.id}` },
      client: { reference: `ClientApplication/${client.id}` },
      membership: { reference: `ProjectMembership/${membership.id}` },
      project: { reference: `Project/${projectId}` },
      authMethod: 'exchange',
      authTime: new Date().toISOString(),
      scope,
      granted: true,
      ...(remoteAddress ? { remoteAddress } : {}),
    })
  ).resource;
  return signTokens(deps, login, ctx, client);
}
