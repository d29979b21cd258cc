import type { FastifyRequest } from 'fastify';
import { badRequest, fail, forbiddenWith, isValidId, notFoundWith } from '@hearth/core';
import type { AuthModule } from '../auth/module.js';
import type { RequestAuth } from '../auth/authenticate.js';
import { readByReference } from '../auth/store.js';
import type { Project } from '../auth/types.js';
import { assertAdminScope } from '../auth/access/admin-scope.js';

/**
 * The caller of a project admin endpoint: an admin of that very project, or a super admin.
 * Anyone else gets 403 (the project's existence is not confirmed to non-members: 403 either way).
 */
export async function requireProjectAdmin(
  auth: AuthModule,
  request: FastifyRequest,
  projectId: string,
): Promise<{ caller: RequestAuth; project: Project }> {
  const caller = await auth.authenticator.require(request);
  if (!isValidId(projectId)) {
    fail(badRequest('Invalid project id', 'projectId'));
  }
  assertAdminScope(caller);
  const ownProject = caller.project.id === projectId;
  if (!caller.superAdmin && !(ownProject && caller.projectAdmin)) {
    fail(forbiddenWith('Only the admins of this project may do this'));
  }
  const project = ownProject ? caller.project : await readByReference<Project>(auth.deps.pool, `Project/${projectId}`);
  if (!project) {
    fail(notFoundWith('Project not found'));
  }
  return { caller, project };
}

export async function requireSuperAdmin(auth: AuthModule, request: FastifyRequest): Promise<RequestAuth> {
  const caller = await auth.authenticator.require(request);
  if (!caller.superAdmin) {
    fail(forbiddenWith('Only super admins may do this'));
  }
  assertAdminScope(caller);
  return caller;
}
