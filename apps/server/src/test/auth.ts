import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Resource } from '@hearth/core';
import type { Services } from '../services.js';
import { createMembership, createProfile, createProject, createUser, referenceTo } from '../auth/projects.js';
import type { TokenResponse } from '../auth/tokens.js';
import type { ClientApplication, Project, ProjectMembership, User } from '../auth/types.js';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkcePair(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** POSTs an HTML form (application/x-www-form-urlencoded), as the browser sign-in pages do. */
export function formPost(app: FastifyInstance, url: string, fields: Record<string, string>) {
  return app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** Registers a client application of `projectId` through the admin API, as its admin (`headers`). */
export async function registerClient(
  app: FastifyInstance,
  projectId: string,
  headers: Record<string, string>,
  body: { name: string; redirectUri?: string },
): Promise<ClientApplication & { id: string; secret?: string }> {
  const res = await app.inject({ method: 'POST', url: `/admin/projects/${projectId}/client`, headers, payload: body });
  if (res.statusCode !== 201 && res.statusCode !== 200) {
    throw new Error(`client registration failed: ${res.statusCode} ${res.body}`);
  }
  return res.json();
}

/** Signs in through the real flow: POST /auth/login (then /auth/profile when asked), then /oauth2/token. */
export async function signIn(
  app: FastifyInstance,
  email: string,
  password: string,
  extra: Record<string, unknown> & { profileId?: string } = {},
): Promise<TokenResponse> {
  const pkce = pkcePair();
  const { profileId, ...loginExtra } = extra;
  const login = await app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email, password, codeChallenge: pkce.challenge, codeChallengeMethod: 'S256', ...loginExtra },
  });
  if (login.statusCode !== 200) {
    throw new Error(`sign-in failed: ${login.statusCode} ${login.body}`);
  }
  let body = login.json() as { login: string; code?: string; memberships?: ProjectMembership[] };
  if (!body.code) {
    const chosen = profileId ?? body.memberships?.[0]?.id;
    const profile = await app.inject({
      method: 'POST',
      url: '/auth/profile',
      payload: { login: body.login, profile: chosen },
    });
    if (profile.statusCode !== 200) {
      throw new Error(`profile choice failed: ${profile.statusCode} ${profile.body}`);
    }
    body = profile.json();
  }
  const token = await app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code: body.code as string,
      code_verifier: pkce.verifier,
    }).toString(),
  });
  if (token.statusCode !== 200) {
    throw new Error(`token exchange failed: ${token.statusCode} ${token.body}`);
  }
  return token.json() as TokenResponse;
}

export interface TestProject {
  project: Project;
  projectId: string;
  user: User;
  email: string;
  password: string;
  membership: ProjectMembership;
  profile: Resource;
  /** The project's default client (with its secret). */
  client: ClientApplication;
  tokens: TokenResponse;
  token: string;
  /** { authorization: 'Bearer …' } for app.inject. */
  headers: { authorization: string };
}

/** A fresh project whose owner (a project admin) is signed in. */
export async function createTestProject(
  app: FastifyInstance,
  services: Services,
  name = 'Test Project',
): Promise<TestProject> {
  const email = `admin-${randomBytes(6).toString('hex')}@example.com`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await createUser(services.auth.deps, { firstName: 'Test', lastName: 'Admin', email, password });
  const created = await createProject(services.auth.deps, { name, owner: user });
  const tokens = await signIn(app, email, password);
  return {
    project: created.project,
    projectId: created.project.id as string,
    user,
    email,
    password,
    membership: created.membership,
    profile: created.profile,
    client: created.client,
    tokens,
    token: tokens.access_token,
    headers: { authorization: `Bearer ${tokens.access_token}` },
  };
}

export interface TestMember {
  user: User;
  email: string;
  password: string;
  membership: ProjectMembership;
  profile: Resource;
  tokens: TokenResponse;
  headers: { authorization: string };
}

/**
 * A user added to a project (what an admin invite does), with a profile of the given type and
 * the membership fields given (accessPolicy, access, admin), signed in with `scope` when given.
 */
export async function addTestMember(
  app: FastifyInstance,
  services: Services,
  projectId: string,
  options: {
    profileType?: 'Practitioner' | 'Patient' | 'RelatedPerson';
    profile?: Resource;
    membership?: Partial<ProjectMembership>;
    scope?: string;
  } = {},
): Promise<TestMember> {
  const deps = services.auth.deps;
  const email = `member-${randomBytes(6).toString('hex')}@example.com`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await createUser(deps, { firstName: 'Test', lastName: 'Member', email, password });
  const profile =
    options.profile ??
    (await createProfile(deps, projectId, options.profileType ?? 'Practitioner', 'Test', 'Member', email));
  const membership = await createMembership(deps, projectId, {
    user: { reference: `User/${user.id}` },
    profile: referenceTo(profile),
    ...options.membership,
  });
  const tokens = await signIn(app, email, password, options.scope ? { scope: options.scope } : {});
  return {
    user,
    email,
    password,
    membership,
    profile,
    tokens,
    headers: { authorization: `Bearer ${tokens.access_token}` },
  };
}
