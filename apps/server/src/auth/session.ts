import { fail, unauthorizedWith, type Reference, type Resource } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { readByReference, readManyByReference } from './store.js';
import type { AccessPolicy, ClientApplication, Login, Project, ProjectMembership } from './types.js';

/** One access policy of a membership with the parameters that fill its %variables. */
export interface PolicyGrant {
  policy: AccessPolicy;
  parameters: Record<string, string>;
}

/** Who a request acts as, resolved from its token: the login, membership, project and policies. */
export interface AuthState {
  login: Login;
  membership: ProjectMembership;
  project: Project;
  /** The User, Bot or ClientApplication that signed in. */
  user: Resource;
  /** The membership's profile (Practitioner/.., Patient/.., ClientApplication/..). */
  profile: Reference;
  client?: ClientApplication;
  /** Members of the super admin project act across every project. */
  superAdmin: boolean;
  projectAdmin: boolean;
  /** Granted OAuth scopes, space separated. */
  scope: string;
  /** The membership's access policies; none means the member's role decides alone. */
  grants: PolicyGrant[];
  /** Projects readable besides the own one (Project.link). */
  linkedProjects: string[];
}

/** The context a membership acts in, shared by token issuance and request authentication. */
export interface MembershipContext {
  membership: ProjectMembership;
  project: Project;
  user: Resource;
  grants: PolicyGrant[];
  linkedProjects: string[];
}

/**
 * Reads what a membership acts with, checking that it is active and consistent: its row lives in
 * the project it names, the project is active, the user still exists. Anything else is a 401.
 */
export async function resolveMembership(
  db: Queryable,
  membershipReference: string | undefined,
): Promise<MembershipContext> {
  const row = await readMembershipRow(db, membershipReference);
  if (!row) {
    fail(unauthorizedWith('Membership not found'));
  }
  const { membership, projectId } = row;
  if (membership.active === false) {
    fail(unauthorizedWith('Membership is not active'));
  }
  if (membership.project?.reference !== `Project/${projectId}`) {
    fail(unauthorizedWith('Membership does not belong to its project'));
  }
  const policyRefs = [membership.accessPolicy?.reference, ...(membership.access ?? []).map((a) => a.policy?.reference)];
  const found = await readManyByReference(db, [
    membership.project.reference,
    membership.user?.reference,
    ...policyRefs,
  ]);
  const project = found.get(membership.project.reference) as Project | undefined;
  if (!project || project.active === false) {
    fail(unauthorizedWith('Project is not active'));
  }
  const user = found.get(membership.user?.reference ?? '');
  if (!user) {
    fail(unauthorizedWith('User not found'));
  }
  const grants: PolicyGrant[] = [];
  const profileRef = membership.profile?.reference ?? '';
  const base: Record<string, string> = { profile: profileRef };
  if (profileRef.startsWith('Patient/')) {
    base.patient = profileRef;
  }
  const addGrant = async (ref: string | undefined, parameters: Record<string, string>): Promise<void> => {
    const policy = found.get(ref ?? '') as AccessPolicy | undefined;
    if (!ref) {
      return;
    }
    if (!policy || policy.meta?.project !== projectId) {
      // A policy that cannot be read grants nothing; the member keeps no access rather than full access.
      grants.push({ policy: { resourceType: 'AccessPolicy', resource: [] }, parameters });
      return;
    }
    grants.push({ policy: await withBasedOn(db, policy, projectId), parameters });
  };
  await addGrant(membership.accessPolicy?.reference, base);
  for (const access of membership.access ?? []) {
    const parameters = { ...base };
    for (const p of access.parameter ?? []) {
      const value = p.valueReference?.reference ?? p.valueString;
      if (p.name && value !== undefined) {
        parameters[p.name] = value;
      }
    }
    await addGrant(access.policy?.reference, parameters);
  }
  const linkedProjects = (project.link ?? [])
    .map((l) => l.project?.reference?.replace(/^Project\//, ''))
    .filter((id): id is string => Boolean(id));
  return { membership, project, user, grants, linkedProjects };
}

/** Rules of the policies a policy is based on are merged into it (AccessPolicy.basedOn), one level deep per hop, cycles ignored. */
async function withBasedOn(
  db: Queryable,
  policy: AccessPolicy,
  projectId: string,
  seen = new Set<string>(),
): Promise<AccessPolicy> {
  if (!policy.basedOn?.length) {
    return policy;
  }
  seen.add(`AccessPolicy/${policy.id}`);
  const merged: AccessPolicy = {
    ...policy,
    resource: [...(policy.resource ?? [])],
    ipAccessRule: [...(policy.ipAccessRule ?? [])],
  };
  for (const ref of policy.basedOn) {
    if (!ref.reference || seen.has(ref.reference)) {
      continue;
    }
    const base = await readByReference<AccessPolicy>(db, ref.reference);
    if (base && base.meta?.project === projectId) {
      const expanded = await withBasedOn(db, base, projectId, seen);
      merged.resource?.push(...(expanded.resource ?? []));
      merged.ipAccessRule?.push(...(expanded.ipAccessRule ?? []));
      merged.compartment ??= expanded.compartment;
    }
  }
  return merged;
}

async function readMembershipRow(
  db: Queryable,
  reference: string | undefined,
): Promise<{ membership: ProjectMembership; projectId: string } | undefined> {
  const id = reference?.startsWith('ProjectMembership/') ? reference.slice('ProjectMembership/'.length) : undefined;
  if (!id) {
    return undefined;
  }
  const result = await db.query<{ content: string; project_id: string }>(
    'SELECT content, project_id FROM "ProjectMembership" WHERE id = $1 AND NOT deleted',
    [id],
  );
  const row = result.rows[0];
  return row ? { membership: JSON.parse(row.content) as ProjectMembership, projectId: row.project_id } : undefined;
}

/** Builds the AuthState of a granted login. */
export async function loadLoginState(db: Queryable, login: Login): Promise<AuthState> {
  if (login.revoked) {
    fail(unauthorizedWith('Login revoked'));
  }
  if (!login.granted || !login.membership) {
    fail(unauthorizedWith('Login not granted'));
  }
  const ctx = await resolveMembership(db, login.membership.reference);
  if (login.user.reference !== ctx.membership.user.reference) {
    fail(unauthorizedWith('Login does not match its membership'));
  }
  const client = login.client ? await readByReference<ClientApplication>(db, login.client.reference) : undefined;
  if (login.client && !client) {
    fail(unauthorizedWith('Client application not found'));
  }
  return toAuthState(login, ctx, client);
}

export function toAuthState(login: Login, ctx: MembershipContext, client?: ClientApplication): AuthState {
  return {
    login,
    membership: ctx.membership,
    project: ctx.project,
    user: ctx.user,
    profile: ctx.membership.profile,
    client,
    superAdmin: ctx.project.superAdmin === true,
    projectAdmin: ctx.membership.admin === true,
    scope: login.scope ?? 'openid',
    grants: ctx.grants,
    linkedProjects: ctx.linkedProjects,
  };
}
