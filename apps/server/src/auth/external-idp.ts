import { decodeJwt } from 'jose';
import { badRequest, fail, forbiddenWith, isValidId } from '@hearth/core';
import { outboundRequest } from '../platform/outbound-http.js';
import type { AuthDeps } from './deps.js';
import { appBaseUrl } from './deps.js';
import type { AuthenticatedClient } from './clients.js';
import { auditLogin } from './audit.js';
import {
  checkLoginParams,
  loadClient,
  startLogin,
  type LoginParams,
  type LoginResponse,
  type RequestInfo,
} from './login-flow.js';
import { oauthFail } from './oauth-error.js';
import { generateSecret, s256 } from './passwords.js';
import { isKnownScope, splitScope } from './access/scopes.js';
import { resolveMembership } from './session.js';
import { findDomainConfiguration, findMembershipsOfUser, findUserByEmail } from './store.js';
import { signTokens, type TokenResponse } from './tokens.js';
import type { ClientApplication, IdentityProviderConfig, Login, User } from './types.js';

const STATE_TYP = 'external-state+jwt';
const STATE_LIFETIME = 600;

interface ExternalState {
  domain?: string;
  clientId?: string;
  params: LoginParams;
  verifier?: string;
  /** The state the client passed, returned with the final redirect. */
  clientState?: string;
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
  state: Pick<ExternalState, 'domain' | 'clientId'>,
): Promise<{ idp: IdentityProviderConfig; client?: ClientApplication }> {
  if (state.domain) {
    const config = await findDomainConfiguration(deps.pool, state.domain);
    if (!config?.identityProvider?.authorizeUrl || !config.identityProvider.tokenUrl) {
      fail(badRequest(`No identity provider is configured for ${state.domain}`, 'domain'));
    }
    return { idp: config.identityProvider, client: await loadClient(deps, state.clientId) };
  }
  const client = await loadClient(deps, state.clientId);
  if (!client?.identityProvider?.authorizeUrl || !client.identityProvider.tokenUrl) {
    fail(badRequest('The client has no identity provider', 'clientId'));
  }
  return { idp: client.identityProvider, client };
}

function callbackUrl(deps: AuthDeps): string {
  return `${deps.config.baseUrl}auth/external`;
}

/** GET /auth/external/start: where to send the browser to sign in with the external IdP. */
export async function externalStart(deps: AuthDeps, query: Record<string, string | undefined>): Promise<string> {
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
  const { idp, client } = await identityProvider(deps, { domain, clientId: query.clientId });
  checkLoginParams(params, client);
  const state: ExternalState = { domain, clientId: query.clientId, params, clientState: query.state };
  const url = new URL(idp.authorizeUrl as string);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', idp.clientId ?? '');
  url.searchParams.set('redirect_uri', callbackUrl(deps));
  url.searchParams.set('scope', 'openid email profile');
  if (idp.usePkce) {
    state.verifier = generateSecret(48);
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('code_challenge', s256(state.verifier));
  }
  url.searchParams.set('state', await deps.keys.sign({ ...state }, STATE_LIFETIME, STATE_TYP));
  return url.toString();
}

/**
 * The identity claims from the IdP's tokens: its userinfo endpoint when configured, else the ID
 * token. The ID token came straight from the IdP's token endpoint over TLS, which validates its
 * issuer (OIDC Core §3.1.3.7); its audience must still be our client id.
 */
async function identityClaims(
  deps: AuthDeps,
  idp: IdentityProviderConfig,
  tokens: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (idp.userInfoUrl && typeof tokens.access_token === 'string') {
    return idpJson(deps, idp.userInfoUrl, {
      headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' },
    });
  }
  const idToken = tokens.id_token;
  if (typeof idToken !== 'string') {
    fail(badRequest('Identity provider returned neither an ID token nor a userinfo endpoint'));
  }
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(idToken);
  } catch {
    fail(badRequest('Identity provider returned an ID token that is not a JWT'));
  }
  const aud = claims.aud;
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (idp.clientId && !audiences.includes(idp.clientId)) {
    fail(badRequest('The ID token was not issued for this client'));
  }
  if (typeof claims.exp === 'number' && claims.exp * 1000 < Date.now()) {
    fail(badRequest('The ID token has expired'));
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

/** GET /auth/external?code&state: finishes the external sign-in; returns where to redirect the browser. */
export async function externalCallback(
  deps: AuthDeps,
  query: Record<string, string | undefined>,
  info: RequestInfo,
): Promise<string> {
  if (query.error) {
    fail(badRequest(`Identity provider error: ${query.error_description ?? query.error}`));
  }
  if (!query.code || !query.state) {
    fail(badRequest('Missing code or state'));
  }
  let state: ExternalState;
  try {
    state = (await deps.keys.verify(query.state, { typ: STATE_TYP })) as unknown as ExternalState;
  } catch {
    fail(badRequest('Invalid or expired state'));
  }
  const { idp, client } = await identityProvider(deps, state);
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: query.code,
    redirect_uri: callbackUrl(deps),
  });
  if (state.verifier) {
    form.set('code_verifier', state.verifier);
  }
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (idp.tokenAuthMethod === 'client_secret_post') {
    form.set('client_id', idp.clientId ?? '');
    form.set('client_secret', idp.clientSecret ?? '');
  } else {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(idp.clientId ?? '')}:${encodeURIComponent(idp.clientSecret ?? '')}`).toString('base64')}`;
  }
  const tokens = await idpJson(deps, idp.tokenUrl as string, { method: 'POST', headers, body: form.toString() });
  const claims = await identityClaims(deps, idp, tokens);
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
  return finalRedirect(deps, state, result);
}

function finalRedirect(deps: AuthDeps, state: ExternalState, result: LoginResponse): string {
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
