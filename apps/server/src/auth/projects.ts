import { badRequest, conflict, fail, generateId, type Reference, type Resource } from '@hearth/core';
import type { AuthDeps } from './deps.js';
import { generateSecret, hashPassword } from './passwords.js';
import { findUserByEmail } from './store.js';
import type { ClientApplication, Project, ProjectMembership, User } from './types.js';

export type ProfileType = 'Practitioner' | 'Patient' | 'RelatedPerson';

export interface NewUser {
  firstName: string;
  lastName: string;
  email?: string;
  password?: string;
  externalId?: string;
  /** A project-scoped user belongs to this project only; without it the user is server-wide. */
  projectId?: string;
}

export function normalizeEmail(email: unknown, field = 'email'): string {
  if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim()) || email.length > 320) {
    fail(badRequest('A valid email address is required', field));
  }
  return email.trim().toLowerCase();
}

/** Creates a User (server-scoped, stored in the super admin project; or project-scoped). Email must be free. */
export async function createUser(deps: AuthDeps, input: NewUser): Promise<User> {
  const email = input.email ? normalizeEmail(input.email) : undefined;
  if (email) {
    const existing = await findUserByEmail(deps.pool, email, input.projectId);
    if (
      existing &&
      (input.projectId ? existing.project?.reference === `Project/${input.projectId}` : !existing.project)
    ) {
      fail(conflict('Email already registered'));
    }
  }
  const user: User = {
    resourceType: 'User',
    firstName: input.firstName,
    lastName: input.lastName,
    ...(email ? { email } : {}),
    ...(input.externalId ? { externalId: input.externalId } : {}),
    ...(input.password ? { passwordHash: await hashPassword(input.password) } : {}),
    ...(input.projectId ? { project: { reference: `Project/${input.projectId}` } } : {}),
  };
  const repo = deps.systemRepo(input.projectId ?? deps.superAdminProjectId);
  return (await repo.createResource(user)).resource;
}

/** The profile resource of a member: a Practitioner, Patient or RelatedPerson named like the user. */
export async function createProfile(
  deps: AuthDeps,
  projectId: string,
  resourceType: ProfileType,
  firstName: string,
  lastName: string,
  email?: string,
): Promise<Resource> {
  if (!['Practitioner', 'Patient', 'RelatedPerson'].includes(resourceType)) {
    fail(badRequest('resourceType must be Patient, Practitioner or RelatedPerson', 'resourceType'));
  }
  const profile: Resource = {
    resourceType,
    name: [{ given: [firstName], family: lastName }],
    ...(email ? { telecom: [{ system: 'email', use: 'work', value: email }] } : {}),
  };
  return (await deps.systemRepo(projectId).createResource(profile)).resource;
}

export function displayName(resource: Resource): string | undefined {
  const r = resource as { name?: unknown; firstName?: string; lastName?: string };
  if (typeof r.name === 'string') {
    return r.name;
  }
  const name = Array.isArray(r.name) ? (r.name[0] as { given?: string[]; family?: string; text?: string }) : undefined;
  if (name) {
    return name.text ?? [...(name.given ?? []), name.family].filter(Boolean).join(' ');
  }
  return [r.firstName, r.lastName].filter(Boolean).join(' ') || undefined;
}

export function referenceTo(resource: Resource): Reference {
  const display = displayName(resource);
  return { reference: `${resource.resourceType}/${resource.id}`, ...(display ? { display } : {}) };
}

export async function createMembership(
  deps: AuthDeps,
  projectId: string,
  fields: Omit<ProjectMembership, 'resourceType' | 'project'>,
): Promise<ProjectMembership> {
  const membership = {
    resourceType: 'ProjectMembership',
    project: { reference: `Project/${projectId}` },
    ...fields,
  } as ProjectMembership;
  return (await deps.systemRepo(projectId).createResource(membership)).resource;
}

export interface NewClient {
  name: string;
  description?: string;
  redirectUri?: string;
  redirectUris?: string[];
  jwksUri?: string;
  launchUri?: string;
  pkceOptional?: boolean;
  accessPolicy?: Reference;
  identityProvider?: ClientApplication['identityProvider'];
  admin?: boolean;
}

/** A ClientApplication with a fresh secret and the membership it acts through (client_credentials). */
export async function createClient(
  deps: AuthDeps,
  projectId: string,
  input: NewClient,
  withMembership = true,
): Promise<{ client: ClientApplication; membership?: ProjectMembership }> {
  const redirectUris = [...(input.redirectUris ?? []), ...(input.redirectUri ? [input.redirectUri] : [])];
  const client: ClientApplication = {
    resourceType: 'ClientApplication',
    status: 'active',
    name: input.name,
    ...(input.description ? { description: input.description } : {}),
    secret: generateSecret(32),
    ...(redirectUris.length ? { redirectUris: [...new Set(redirectUris)] } : {}),
    ...(input.jwksUri ? { jwksUri: input.jwksUri } : {}),
    ...(input.launchUri ? { launchUri: input.launchUri } : {}),
    ...(input.pkceOptional ? { pkceOptional: true } : {}),
    ...(input.identityProvider ? { identityProvider: input.identityProvider } : {}),
  };
  const created = (await deps.systemRepo(projectId).createResource(client)).resource;
  if (!withMembership) {
    return { client: created };
  }
  const ref = { reference: `ClientApplication/${created.id}`, display: created.name };
  const membership = await createMembership(deps, projectId, {
    user: ref,
    profile: ref,
    ...(input.accessPolicy ? { accessPolicy: input.accessPolicy } : {}),
    ...(input.admin ? { admin: true } : {}),
  });
  return { client: created, membership };
}

export interface NewProject {
  name: string;
  description?: string;
  owner: User;
  /** Fields of Project a super admin may set at creation. */
  strictMode?: boolean;
}

export interface CreatedProject {
  project: Project;
  profile: Resource;
  membership: ProjectMembership;
  client: ClientApplication;
}

/**
 * A new project with its owner as admin (a Practitioner profile and an admin membership) and a
 * default client application. The Project resource lives in itself.
 */
export async function createProject(deps: AuthDeps, input: NewProject): Promise<CreatedProject> {
  if (typeof input.name !== 'string' || !input.name.trim()) {
    fail(badRequest('Project name is required', 'name'));
  }
  const projectId = generateId();
  const project: Project = {
    resourceType: 'Project',
    id: projectId,
    name: input.name.trim(),
    ...(input.description ? { description: input.description } : {}),
    owner: { reference: `User/${input.owner.id}` },
    strictMode: input.strictMode ?? true,
  };
  const created = (await deps.systemRepo(projectId).updateResource(project)).resource;
  const profile = await createProfile(
    deps,
    projectId,
    'Practitioner',
    input.owner.firstName,
    input.owner.lastName,
    input.owner.email,
  );
  const membership = await createMembership(deps, projectId, {
    user: { reference: `User/${input.owner.id}`, display: input.owner.email },
    profile: referenceTo(profile),
    admin: true,
  });
  const { client } = await createClient(deps, projectId, {
    name: `${project.name} Default Client`,
    description: 'Created with the project',
  });
  return { project: created, profile, membership, client };
}
