// A signed-in caller (auth's RequestAuth) as the trail names it.
import type { RequestAuth } from '../auth/authenticate.js';
import type { AuditCaller } from './module.js';

export function auditCallerOf(auth: RequestAuth | undefined): AuditCaller | undefined {
  const projectId = auth?.project.id;
  if (!auth || !projectId) return undefined;
  const profile = auth.profile?.reference;
  const membershipId = auth.membership.id;
  const login = auth.user?.id ? `${auth.user.resourceType}/${auth.user.id}` : undefined;
  return {
    project: { ...auth.project, id: projectId },
    admin: auth.projectAdmin || auth.superAdmin,
    patient: profile?.startsWith('Patient/') ? profile : undefined,
    agent: {
      profile,
      profileDisplay: auth.profile?.display,
      membership: membershipId ? `ProjectMembership/${membershipId}` : undefined,
      login,
    },
  };
}
