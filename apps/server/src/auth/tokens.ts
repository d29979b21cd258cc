import type { JWTPayload } from 'jose';
import type { Reference } from '@hearth/core';
import type { AuthDeps } from './deps.js';
import { generateSecret } from './passwords.js';
import { parseLifetime } from './lifetimes.js';
import { hasScope, splitScope } from './access/scopes.js';
import { isFhircastScope } from '../fhircast/scopes.js';
import { topicFor } from '../fhircast/topic.js';
import type { MembershipContext } from './session.js';
import type { ClientApplication, Login, SmartAppLaunch } from './types.js';
import { readByReference } from './store.js';

/** The token endpoint's answer (RFC 6749 §5.1, OIDC Core §3.1.3.3, SMART App Launch 2.0 §2.0.8). */
export interface TokenResponse {
  token_type: 'Bearer';
  access_token: string;
  expires_in: number;
  id_token?: string;
  refresh_token?: string;
  scope: string;
  project: Reference;
  profile: Reference;
  patient?: string;
  encounter?: string;
  fhirUser?: string;
  need_patient_banner?: boolean;
  /** FHIRcast (when a fhircast/ scope was granted): the hub and the user's topic. */
  'hub.url'?: string;
  'hub.topic'?: string;
}

/** Claims of an access token; login_id ties it to the Login that can be revoked. */
export interface AccessClaims extends JWTPayload {
  login_id: string;
  client_id?: string;
  profile: string;
  scope: string;
  username?: string;
  /** The user's FHIRcast topic, when a fhircast/ scope was granted. */
  'hub.topic'?: string;
}

export interface RefreshClaims extends JWTPayload {
  login_id: string;
  refresh_secret: string;
}

/** JWT `typ` headers: an ID token or refresh token is never accepted as an access token. */
export const ACCESS_TOKEN_TYP = 'at+jwt';
export const REFRESH_TOKEN_TYP = 'refresh+jwt';

export function accessLifetime(deps: AuthDeps, client?: ClientApplication): number {
  const fromClient = parseLifetime(client?.accessTokenLifetime);
  return fromClient && fromClient > 0
    ? Math.min(fromClient, deps.config.accessTokenLifetimeSeconds * 24)
    : deps.config.accessTokenLifetimeSeconds;
}

function refreshLifetime(deps: AuthDeps, client?: ClientApplication): number {
  const fromClient = parseLifetime(client?.refreshTokenLifetime);
  return fromClient && fromClient > 0 ? fromClient : deps.config.refreshTokenLifetimeSeconds;
}

/**
 * Signs the tokens of a granted login. The Login must already be stored with granted = true and,
 * when a refresh token is due, its current refreshSecret.
 */
export async function signTokens(
  deps: AuthDeps,
  login: Login,
  ctx: MembershipContext,
  client?: ClientApplication,
): Promise<TokenResponse> {
  const scope = login.scope ?? 'openid';
  const profile = ctx.membership.profile;
  const user = ctx.user;
  const lifetime = accessLifetime(deps, client);
  const clientId = client?.id;
  const accessClaims: AccessClaims = {
    login_id: login.id as string,
    sub: user.id,
    username: user.id,
    profile: profile.reference as string,
    scope,
    ...(clientId ? { client_id: clientId } : {}),
  };
  // FHIRcast's launch context: the hub and the topic of this user (fhircast/topic.ts), for a token
  // granted a fhircast/ scope or a first-party sign-in (Hearth's app, which may use its own topic).
  const fhircastTopic =
    splitScope(scope).some(isFhircastScope) || !login.client
      ? topicFor(ctx.project.id as string, profile.reference as string)
      : undefined;
  if (fhircastTopic) {
    accessClaims['hub.topic'] = fhircastTopic;
  }
  const accessToken = await deps.keys.sign(accessClaims, lifetime, ACCESS_TOKEN_TYP);
  const fhirUser = `${deps.config.baseUrl}fhir/R4/${profile.reference}`;
  const response: TokenResponse = {
    token_type: 'Bearer',
    access_token: accessToken,
    expires_in: lifetime,
    scope,
    project: { reference: `Project/${ctx.project.id}` },
    profile: { reference: profile.reference, display: profile.display } as Reference,
  };
  if (!profile.display) {
    delete response.profile.display;
  }
  if (hasScope(scope, 'openid')) {
    const idClaims: JWTPayload = {
      sub: user.id,
      aud: clientId ?? deps.config.baseUrl,
      login_id: login.id,
      auth_time: Math.floor(new Date(login.authTime).getTime() / 1000),
      ...(login.nonce ? { nonce: login.nonce } : {}),
    };
    if (hasScope(scope, 'fhirUser') || hasScope(scope, 'profile')) {
      idClaims.fhirUser = fhirUser;
      idClaims.profile = profile.reference;
    }
    if (hasScope(scope, 'profile') || hasScope(scope, 'email')) {
      const u = user as { firstName?: string; lastName?: string; email?: string; emailVerified?: boolean };
      if (u.firstName || u.lastName) {
        idClaims.name = [u.firstName, u.lastName].filter(Boolean).join(' ');
        idClaims.given_name = u.firstName;
        idClaims.family_name = u.lastName;
      }
      if (u.email) {
        idClaims.email = u.email;
        idClaims.email_verified = u.emailVerified === true;
      }
    }
    response.id_token = await deps.keys.sign(idClaims, lifetime);
  }
  if (login.refreshSecret) {
    const refreshClaims: RefreshClaims = { login_id: login.id as string, refresh_secret: login.refreshSecret };
    response.refresh_token = await deps.keys.sign(refreshClaims, refreshLifetime(deps, client), REFRESH_TOKEN_TYP);
  }
  if (hasScope(scope, 'fhirUser') || hasScope(scope, 'openid')) {
    response.fhirUser = fhirUser;
  }
  await addLaunchContext(deps, login, ctx, scope, response);
  if (fhircastTopic) {
    response['hub.url'] = `${deps.config.baseUrl}fhircast`;
    response['hub.topic'] = fhircastTopic;
  }
  return response;
}

/** SMART launch context (launch/patient, launch/encounter, or an EHR launch's SmartAppLaunch). */
async function addLaunchContext(
  deps: AuthDeps,
  login: Login,
  ctx: MembershipContext,
  scope: string,
  response: TokenResponse,
): Promise<void> {
  const patient = await launchPatient(deps, login, ctx);
  if (patient && (hasScope(scope, 'launch/patient') || hasScope(scope, 'launch'))) {
    response.patient = patient.replace(/^Patient\//, '');
    response.need_patient_banner = !ctx.membership.profile.reference?.startsWith('Patient/');
  }
  if (login.launch && (hasScope(scope, 'launch/encounter') || hasScope(scope, 'launch'))) {
    const launch = await readByReference<SmartAppLaunch>(deps.pool, login.launch.reference);
    // Only a launch of the project signed into gives context (as for the patient in launchPatient).
    if (launch?.encounter?.reference && launch.meta?.project === ctx.project.id) {
      response.encounter = launch.encounter.reference.replace(/^Encounter\//, '');
    }
  }
}

/** The patient in context: from an EHR launch, else the signed-in patient. */
export async function launchPatient(deps: AuthDeps, login: Login, ctx: MembershipContext): Promise<string | undefined> {
  if (login.launch?.reference) {
    const launch = await readByReference<SmartAppLaunch>(deps.pool, login.launch.reference);
    if (launch?.patient?.reference && launch.meta?.project === ctx.project.id) {
      return launch.patient.reference;
    }
  }
  const profile = ctx.membership.profile.reference ?? '';
  return profile.startsWith('Patient/') ? profile : undefined;
}

/** A fresh refresh secret when the login may refresh: remember-me, offline_access/online_access, or a first-party sign-in. */
export function newRefreshSecret(
  login: Pick<Login, 'scope'>,
  remember: boolean,
  firstParty: boolean,
): string | undefined {
  const scope = login.scope ?? '';
  if (remember || firstParty || hasScope(scope, 'offline_access') || hasScope(scope, 'online_access')) {
    return generateSecret(32);
  }
  return undefined;
}
