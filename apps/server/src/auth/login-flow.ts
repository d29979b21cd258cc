import { badRequest, fail, forbiddenWith, getDisplayString, isValidId, type Resource } from '@hearth/core';
import type { AuthDeps } from './deps.js';
import { generateSecret } from './passwords.js';
import { isKnownScope, splitScope } from './access/scopes.js';
import { newRefreshSecret } from './tokens.js';
import { findMembershipsOfUser, readByReference, readManyByReference } from './store.js';
import { mfaStep } from './mfa.js';
import { auditLogin } from './audit.js';
import {
  type ClientApplication,
  type Login,
  type LoginResponse,
  type Project,
  type ProjectMembership,
  type User,
} from './types.js';

/** The spec's LoginRequest fields, shared by every way of signing in. */
export interface LoginParams {
  projectId?: string;
  clientId?: string;
  scope?: string;
  nonce?: string;
  launch?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  resourceType?: string;
  redirectUri?: string;
  remember?: boolean;
}

/** A sign-in must be finished (profile chosen, second factor given, code exchanged) this long after it began. */
export const LOGIN_FLOW_MS = 15 * 60 * 1000;

export interface RequestInfo {
  remoteAddress?: string;
  userAgent?: string;
}

/** Reads and checks the client a sign-in is for: it must exist and be active. */
export async function loadClient(deps: AuthDeps, clientId: string | undefined): Promise<ClientApplication | undefined> {
  if (!clientId) {
    return undefined;
  }
  const client = isValidId(clientId)
    ? await readByReference<ClientApplication>(deps.pool, `ClientApplication/${clientId}`)
    : undefined;
  if (!client) {
    fail(badRequest('Client not found', 'clientId'));
  }
  if (client.status && client.status !== 'active') {
    fail(forbiddenWith('Client application is not active'));
  }
  return client;
}

/** The redirect URIs a client registered; a redirect must equal one of them exactly (RFC 6749 §3.1.2.3). */
export function registeredRedirectUris(client: ClientApplication): string[] {
  return [...(client.redirectUris ?? []), ...(client.redirectUri ? [client.redirectUri] : [])];
}

export function checkLoginParams(params: LoginParams, client: ClientApplication | undefined): void {
  if (params.codeChallenge !== undefined || params.codeChallengeMethod !== undefined) {
    if (!params.codeChallenge || typeof params.codeChallenge !== 'string') {
      fail(badRequest('codeChallenge is required with codeChallengeMethod', 'codeChallenge'));
    }
    if (params.codeChallengeMethod !== 'plain' && params.codeChallengeMethod !== 'S256') {
      fail(badRequest("codeChallengeMethod must be 'plain' or 'S256'", 'codeChallengeMethod'));
    }
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(params.codeChallenge) && params.codeChallengeMethod === 'S256') {
      fail(badRequest('codeChallenge must be a base64url SHA-256 (43 characters)', 'codeChallenge'));
    }
  }
  if (params.projectId !== undefined && !isValidId(params.projectId)) {
    fail(badRequest('Invalid projectId', 'projectId'));
  }
  if (params.redirectUri) {
    if (!client) {
      fail(badRequest('redirectUri needs a clientId', 'redirectUri'));
    }
    if (!registeredRedirectUris(client).includes(params.redirectUri)) {
      fail(badRequest('redirectUri does not match a redirect URI registered for the client', 'redirectUri'));
    }
  }
}

/** Creates the Login of a user who proved who they are, then takes the next step of the flow. */
export async function startLogin(
  deps: AuthDeps,
  input: {
    user: User;
    authMethod: Login['authMethod'];
    params: LoginParams;
    client?: ClientApplication;
    info: RequestInfo;
    mfaVerified?: boolean;
  },
): Promise<LoginResponse> {
  const { user, params, client } = input;
  const scope = splitScope(params.scope ?? 'openid')
    .filter(isKnownScope)
    .join(' ');
  const firstParty = !client || client.meta?.project === deps.superAdminProjectId;
  const login: Login = {
    resourceType: 'Login',
    user: { reference: `User/${user.id}`, display: user.email },
    authMethod: input.authMethod,
    authTime: new Date().toISOString(),
    scope: scope || 'openid',
    ...(client ? { client: { reference: `ClientApplication/${client.id}` } } : {}),
    ...(params.projectId ? { project: { reference: `Project/${params.projectId}` } } : {}),
    ...(params.nonce ? { nonce: String(params.nonce) } : {}),
    ...(params.codeChallenge
      ? { codeChallenge: params.codeChallenge, codeChallengeMethod: params.codeChallengeMethod as 'plain' | 'S256' }
      : {}),
    ...(params.launch && isValidId(params.launch) ? { launch: { reference: `SmartAppLaunch/${params.launch}` } } : {}),
    ...(params.resourceType ? { profileType: params.resourceType } : {}),
    ...(input.info.remoteAddress ? { remoteAddress: input.info.remoteAddress } : {}),
    ...(input.info.userAgent ? { userAgent: input.info.userAgent.slice(0, 500) } : {}),
    ...(input.mfaVerified ? { mfaVerified: true } : {}),
  };
  login.refreshSecret = newRefreshSecret(login, params.remember === true, firstParty);
  if (params.redirectUri) {
    login.redirectUri = params.redirectUri;
  }
  if (params.remember) {
    login.remember = true;
  }
  const created = await deps.systemRepo().createResource(login);
  return nextStep(deps, created.resource, user);
}

/** After authentication: a second factor if due, then the membership (chosen, or the only one that fits). */
export async function nextStep(deps: AuthDeps, login: Login, user: User): Promise<LoginResponse> {
  const mfa = await mfaStep(deps, login, user, undefined);
  if (mfa) {
    return mfa;
  }
  const memberships = await fittingMemberships(deps, login);
  if (memberships.length === 1) {
    return chooseMembership(deps, login, memberships[0]);
  }
  if (memberships.length === 0 && (await fittingMemberships(deps, login, true)).length > 0) {
    // Memberships that would fit, all disabled: say so, rather than offer an empty choice.
    fail(forbiddenWith('The project membership of this user is not active'));
  }
  // None at all: a new user, who goes on with /auth/newproject or /auth/newpatient.
  return { login: login.id as string, memberships: await withDisplays(deps, memberships) };
}

/**
 * The memberships offered for choice, their project and profile references carrying the names
 * (read in one query): a person tells two projects apart by name, not by id.
 */
async function withDisplays(deps: AuthDeps, memberships: ProjectMembership[]): Promise<ProjectMembership[]> {
  const targets = await readManyByReference(
    deps.pool,
    memberships.flatMap((m) => [m.project?.reference, m.profile?.reference]),
  );
  const named = <R extends { reference?: string; display?: string }>(ref: R): R => {
    const target = ref?.reference ? targets.get(ref.reference) : undefined;
    return target && !ref.display ? { ...ref, display: getDisplayString(target) } : ref;
  };
  return memberships.map((m) => ({ ...m, project: named(m.project), profile: named(m.profile) }));
}

/** Active memberships (or, asked for, inactive ones too) of the login's user that fit its project, client and profile type. */
export async function fittingMemberships(
  deps: AuthDeps,
  login: Login,
  includeInactive = false,
): Promise<ProjectMembership[]> {
  const projectId = login.project?.reference?.replace(/^Project\//, '');
  let memberships = await findMembershipsOfUser(deps.pool, login.user.reference as string, projectId);
  memberships = memberships.filter(
    (m) => (includeInactive || m.active !== false) && m.project?.reference === `Project/${m.meta?.project}`,
  );
  if (login.client) {
    const client = await readByReference<ClientApplication>(deps.pool, login.client.reference);
    const clientProject = client?.meta?.project;
    if (clientProject && clientProject !== deps.superAdminProjectId) {
      memberships = memberships.filter((m) => m.meta?.project === clientProject);
    }
  }
  if (login.profileType) {
    memberships = memberships.filter((m) => m.profile?.reference?.startsWith(`${login.profileType}/`));
  }
  return memberships;
}

/** Checks that a login is still in its sign-in flow (not granted, not revoked, not expired). */
export function assertLoginPending(login: Login): void {
  if (login.revoked) {
    fail(badRequest('Login revoked', 'login'));
  }
  if (login.granted) {
    fail(badRequest('Login already granted', 'login'));
  }
  if (Date.now() - new Date(login.authTime).getTime() > LOGIN_FLOW_MS) {
    fail(badRequest('Login expired: sign in again', 'login'));
  }
}

export async function readPendingLogin(deps: AuthDeps, loginId: unknown): Promise<Login> {
  if (typeof loginId !== 'string' || !isValidId(loginId)) {
    fail(badRequest('Missing or invalid login', 'login'));
  }
  const login = await readByReference<Login>(deps.pool, `Login/${loginId}`);
  if (!login) {
    fail(badRequest('Login not found', 'login'));
  }
  assertLoginPending(login);
  return login;
}

/** /auth/profile: the user picks one of their memberships. */
export async function chooseMembershipById(
  deps: AuthDeps,
  login: Login,
  membershipId: unknown,
): Promise<LoginResponse> {
  if (typeof membershipId !== 'string' || !isValidId(membershipId)) {
    fail(badRequest('Missing or invalid profile', 'profile'));
  }
  const memberships = await fittingMemberships(deps, login);
  const membership = memberships.find((m) => m.id === membershipId);
  if (!membership) {
    fail(forbiddenWith('That profile is not available to this sign-in'));
  }
  return chooseMembership(deps, login, membership);
}

/** Binds the login to a membership and issues the authorization code. */
export async function chooseMembership(
  deps: AuthDeps,
  login: Login,
  membership: ProjectMembership,
): Promise<LoginResponse> {
  assertLoginPending(login);
  const project = await readByReference<Project>(deps.pool, membership.project.reference);
  if (!project || project.active === false) {
    fail(forbiddenWith('Project is not active'));
  }
  const user = await readByReference<Resource>(deps.pool, login.user.reference);
  if (user?.resourceType === 'User') {
    const mfa = await mfaStep(deps, login, user as User, project);
    if (mfa) {
      return mfa;
    }
  }
  const updated: Login = {
    ...login,
    membership: { reference: `ProjectMembership/${membership.id}` },
    project: { reference: `Project/${project.id}` },
    profileType: membership.profile.reference?.split('/')[0],
    code: generateSecret(32),
    superAdmin: project.superAdmin === true,
    admin: membership.admin === true,
  };
  const written = await deps.systemRepo().updateResource(updated, { ifMatch: Number(login.meta?.versionId) });
  // The sign-in reached the project: recorded there too, where the project's admins can see it.
  await auditLogin(deps, {
    outcome: 'success',
    userId: user?.resourceType === 'User' ? user.id : undefined,
    email: login.user.display,
    projectId: project.id,
    method: login.authMethod,
    reason: `signed in to project ${project.name ?? project.id} as ${membership.profile.reference}`,
    remoteAddress: login.remoteAddress,
    userAgent: login.userAgent,
  });
  return { login: login.id as string, code: written.resource.code };
}
