import { badRequest, conflict, fail, type Reference, type Resource } from '@hearth/core';
import type { AuthModule } from '../auth/module.js';
import { sendSetPasswordEmail } from '../auth/http/password-routes.js';
import { appBaseUrl } from '../auth/deps.js';
import { checkNewPassword, hashPassword } from '../auth/passwords.js';
import {
  createMembership,
  createProfile,
  createUser,
  normalizeEmail,
  referenceTo,
  type ProfileType,
} from '../auth/projects.js';
import { findMembershipsOfUser, findUserByEmail } from '../auth/store.js';
import type { AccessParameter, Project, ProjectMembership, User } from '../auth/types.js';

/** POST /admin/projects/{projectId}/invite (CONTRACTS.md). */
export interface InviteRequest {
  resourceType?: ProfileType;
  firstName: string;
  lastName: string;
  email?: string;
  externalId?: string;
  sendEmail?: boolean;
  password?: string;
  membership?: {
    access?: { policy: Reference; parameter?: AccessParameter[] }[];
    accessPolicy?: Reference;
    admin?: boolean;
    userName?: string;
    externalId?: string;
  };
  /** 'server' (default): one user across projects; 'project': a user of this project only. */
  scope?: 'project' | 'server';
}

export function parseInvite(body: unknown): InviteRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    fail(badRequest('Body must be a JSON object'));
  }
  const b = body as Record<string, unknown>;
  const resourceType = (b.resourceType ?? 'Practitioner') as ProfileType;
  if (!['Patient', 'Practitioner', 'RelatedPerson'].includes(resourceType)) {
    fail(badRequest('resourceType must be Patient, Practitioner or RelatedPerson', 'resourceType'));
  }
  for (const field of ['firstName', 'lastName']) {
    if (typeof b[field] !== 'string' || !(b[field] as string).trim()) {
      fail(badRequest(`${field} is required`, field));
    }
  }
  if (!b.email && !b.externalId) {
    fail(badRequest('email or externalId is required', 'email'));
  }
  if (b.scope !== undefined && b.scope !== 'project' && b.scope !== 'server') {
    fail(badRequest("scope must be 'project' or 'server'", 'scope'));
  }
  return {
    ...(b as unknown as InviteRequest),
    resourceType,
    email: b.email === undefined ? undefined : normalizeEmail(b.email),
    password: b.password === undefined ? undefined : checkNewPassword(b.password),
  };
}

/**
 * Invites a person into a project: the user (found by email, or created), the profile resource
 * and the membership; emails them a set-password link (new user) or a sign-in link.
 */
export async function invite(
  auth: AuthModule,
  project: Project,
  request: InviteRequest,
  invitedBy?: Reference,
): Promise<{ membership: ProjectMembership; user: User; profile: Resource; created: boolean }> {
  const deps = auth.deps;
  const projectId = project.id as string;
  const scoped = request.scope === 'project';
  let user = request.email
    ? await findUserByEmail(deps.pool, request.email, scoped ? projectId : undefined)
    : undefined;
  if (user && scoped && user.project?.reference !== `Project/${projectId}`) {
    user = undefined;
  }
  if (user && !scoped && user.project) {
    user = undefined;
  }
  let created = false;
  if (!user) {
    user = await createUser(deps, {
      firstName: request.firstName.trim(),
      lastName: request.lastName.trim(),
      email: request.email,
      password: request.password,
      externalId: request.externalId,
      projectId: scoped ? projectId : undefined,
    });
    created = true;
  } else {
    const existing = await findMembershipsOfUser(deps.pool, `User/${user.id}`, projectId);
    if (existing.length > 0) {
      fail(conflict('User is already a member of this project'));
    }
    if (request.password) {
      user = (
        await deps
          .systemRepo(user.meta?.project)
          .updateResource({ ...user, passwordHash: await hashPassword(request.password) })
      ).resource;
    }
  }
  const profile = await createProfile(
    deps,
    projectId,
    request.resourceType ?? 'Practitioner',
    request.firstName.trim(),
    request.lastName.trim(),
    request.email,
  );
  const fields = request.membership ?? {};
  const membership = await createMembership(deps, projectId, {
    user: { reference: `User/${user.id}`, display: user.email },
    profile: referenceTo(profile),
    ...(invitedBy ? { invitedBy } : {}),
    ...(fields.admin ? { admin: true } : {}),
    ...(fields.accessPolicy ? { accessPolicy: fields.accessPolicy } : {}),
    ...(fields.access ? { access: fields.access } : {}),
    ...(fields.userName ? { userName: fields.userName } : {}),
    ...((fields.externalId ?? request.externalId) ? { externalId: fields.externalId ?? request.externalId } : {}),
  });
  if (request.sendEmail !== false && user.email) {
    if (created && !request.password) {
      await sendSetPasswordEmail(auth, user, 'invite');
    } else {
      await deps.mailer
        .send({
          to: user.email,
          subject: `You were added to ${project.name ?? 'a Hearth project'}`,
          text: `You now have access to ${project.name ?? 'a project'} on Hearth.\n\nSign in: ${appBaseUrl(deps.config)}signin`,
        })
        .catch((err: unknown) => deps.logger.error({ err, to: user?.email }, 'could not send the invitation email'));
    }
  }
  return { membership, user, profile, created };
}
