import type { FastifyRequest } from 'fastify';
import { badRequest, fail, forbiddenWith, isValidId, notFoundWith } from '@hearth/core';
import type { AuthModule } from '../auth/module.js';
import type { RequestAuth } from '../auth/authenticate.js';
import { readByReference } from '../auth/store.js';
import type { Project } from '../auth/types.js';
import { parseResourceScopes } from '../auth/access/scopes.js';

/**
 * The caller of a project admin endpoint: an admin of that very project, or a super admin.
 * Anyone else gets 403 (the project's existence is not confirmed to non-members: 403 either way).
 */
/**
 * A token whose SMART scopes narrow what it may do (a third-party app acting for an admin)
 * cannot administer: only unscoped tokens, or ones granted every type, may.
 */
export function assertAdminScope(caller: RequestAuth): void {
  const scopes = parseResourceScopes(caller.scope);
  const everything = scopes.some(
    (s) =>
      s.context !== 'patient' &&
      s.resourceType === '*' &&
      !s.query &&
      ['create', 'read', 'update', 'delete', 'search'].every((i) => s.interactions.has(i as never)),
  );
  if (scopes.length > 0 && !everything) {
    fail(forbiddenWith("This token's scopes do not allow administration"));
  }
}

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
