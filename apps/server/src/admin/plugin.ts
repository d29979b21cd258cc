import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  badRequest,
  fail,
  forbiddenWith,
  isValidId,
  notFoundWith,
  type ProjectSetting,
  type Reference,
  type Resource,
} from '@hearth/core';
import type { AuthModule } from '../auth/module.js';
import { createClient, createMembership, referenceTo } from '../auth/projects.js';
import { findProjectMemberships, readByReference } from '../auth/store.js';
import type { Project, ProjectMembership } from '../auth/types.js';
import { requireProjectAdmin } from './access.js';
import { invite, parseInvite } from './invite.js';
import { superAdminRoutes, type SuperAdminDeps } from './super.js';

export interface AdminPluginOptions {
  auth: AuthModule;
  super: SuperAdminDeps;
}

type P<T> = FastifyRequest<{ Params: T }>;

function body(request: FastifyRequest): Record<string, unknown> {
  const b = request.body;
  if (!b || typeof b !== 'object' || Array.isArray(b) || Buffer.isBuffer(b)) {
    fail(badRequest('Body must be a JSON object'));
  }
  return b as Record<string, unknown>;
}

function optionalReference(value: unknown, field: string, type: string): Reference | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  const ref = (value as Reference).reference;
  if (typeof ref !== 'string' || !ref.startsWith(`${type}/`) || !isValidId(ref.slice(type.length + 1))) {
    fail(badRequest(`${field} must be a reference to a ${type}`, field));
  }
  return { reference: ref };
}

/** A policy reference must name a policy of this project. */
async function checkPolicy(auth: AuthModule, projectId: string, ref: Reference | undefined): Promise<void> {
  if (!ref) {
    return;
  }
  const policy = await readByReference<Resource>(auth.deps.pool, ref.reference);
  if (!policy || policy.meta?.project !== projectId) {
    fail(badRequest('accessPolicy must be an AccessPolicy of this project', 'accessPolicy'));
  }
}

/** The project with one of its lists replaced; an empty list removes the element (FHIR has no empty arrays). */
function withList(project: Project, key: 'secret' | 'site', list: unknown[]): Project {
  const updated: Project = { ...project, [key]: list };
  if (list.length === 0) {
    delete updated[key];
  }
  return updated;
}

function settings(value: unknown, field: string): ProjectSetting[] {
  if (
    !Array.isArray(value) ||
    !value.every((s) => s && typeof s === 'object' && typeof (s as ProjectSetting).name === 'string')
  ) {
    fail(badRequest(`${field} must be an array of { name, value[x] }`, field));
  }
  return value as ProjectSetting[];
}

/**
 * Memberships whose invitation is still pending: made by an invite, for a user who has not yet
 * set a password (the emailed link) and signs in by no external identity.
 */
async function pendingInvitations(
  db: AuthModule['deps']['pool'],
  memberships: ProjectMembership[],
): Promise<Set<string>> {
  const invited = memberships.filter((m) => m.invitedBy && m.user?.reference?.startsWith('User/'));
  if (!invited.length) {
    return new Set();
  }
  const ids = invited.map((m) => (m.user?.reference as string).slice('User/'.length));
  const { rows } = await db.query<{ id: string; content: string }>(
    `SELECT id, content FROM "User" WHERE id = ANY($1::text[]) AND NOT deleted`,
    [ids],
  );
  const waiting = new Set(
    rows
      .filter((r) => {
        const user = JSON.parse(r.content) as { passwordHash?: string; externalId?: string };
        return !user.passwordHash && !user.externalId;
      })
      .map((r) => r.id),
  );
  return new Set(
    invited.filter((m) => waiting.has((m.user?.reference as string).slice('User/'.length))).map((m) => m.id as string),
  );
}

/** Project administration (CONTRACTS.md): project admins of that project, or super admins. */
export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  const { auth } = options;
  const deps = auth.deps;

  app.get('/admin/projects/:projectId', async (request: P<{ projectId: string }>, reply) => {
    const { project } = await requireProjectAdmin(auth, request, request.params.projectId);
    const projectId = project.id as string;
    const memberships = await findProjectMemberships(deps.pool, projectId);
    const rows = await deps.pool.query<{ resource_type: string; content: string }>(
      `SELECT resource_type, content FROM resource WHERE resource_type IN ('ClientApplication', 'Bot') AND project_id = $1 AND NOT deleted ORDER BY last_updated`,
      [projectId],
    );
    const parsed = rows.rows.map((r) => JSON.parse(r.content) as Resource);
    const pending = await pendingInvitations(deps.pool, memberships);
    return reply.header('cache-control', 'no-store').send({
      project: {
        id: project.id,
        name: project.name,
        description: project.description,
        owner: project.owner,
        features: project.features,
        setting: project.setting,
        secret: project.secret,
        site: project.site,
        strictMode: project.strictMode,
      },
      members: memberships.map((m) => ({
        id: m.id,
        user: m.user,
        profile: m.profile,
        admin: m.admin === true,
        active: m.active !== false,
        invited: pending.has(m.id as string),
        accessPolicy: m.accessPolicy,
        access: m.access,
        userName: m.userName,
        externalId: m.externalId,
      })),
      clients: parsed.filter((r) => r.resourceType === 'ClientApplication'),
      bots: parsed.filter((r) => r.resourceType === 'Bot'),
    });
  });

  app.post('/admin/projects/:projectId/invite', async (request: P<{ projectId: string }>, reply) => {
    const { caller, project } = await requireProjectAdmin(auth, request, request.params.projectId);
    const req = parseInvite(request.body);
    await checkPolicy(auth, project.id as string, req.membership?.accessPolicy);
    for (const a of req.membership?.access ?? []) {
      await checkPolicy(auth, project.id as string, a.policy);
    }
    const result = await invite(auth, project, req, { reference: `${caller.user.resourceType}/${caller.user.id}` });
    return reply.code(200).send(result.membership);
  });

  /** A new client or bot: the caller administers the project; a name, and a policy of that project if any. */
  const namedAgent = async (request: P<{ projectId: string }>) => {
    const { project } = await requireProjectAdmin(auth, request, request.params.projectId);
    const b = body(request);
    if (typeof b.name !== 'string' || !b.name.trim()) {
      fail(badRequest('name is required', 'name'));
    }
    const accessPolicy = optionalReference(b.accessPolicy, 'accessPolicy', 'AccessPolicy');
    await checkPolicy(auth, project.id as string, accessPolicy);
    return { project, b, name: b.name.trim(), accessPolicy };
  };

  app.post('/admin/projects/:projectId/client', async (request: P<{ projectId: string }>, reply) => {
    const { project, b, name, accessPolicy } = await namedAgent(request);
    const redirectUri = typeof b.redirectUri === 'string' ? b.redirectUri : undefined;
    if (redirectUri && !/^[a-z][a-z0-9+.-]*:\/\//i.test(redirectUri)) {
      fail(badRequest('redirectUri must be an absolute URI', 'redirectUri'));
    }
    const { client } = await createClient(deps, project.id as string, {
      name,
      description: typeof b.description === 'string' ? b.description : undefined,
      redirectUri,
      jwksUri: typeof b.jwksUri === 'string' ? b.jwksUri : undefined,
      accessPolicy,
    });
    return reply.code(201).header('content-type', 'application/fhir+json').send(client);
  });

  app.post('/admin/projects/:projectId/bot', async (request: P<{ projectId: string }>, reply) => {
    const { project, b, name, accessPolicy } = await namedAgent(request);
    const projectId = project.id as string;
    const bot = (
      await deps.systemRepo(projectId).createResource({
        resourceType: 'Bot',
        name,
        ...(typeof b.description === 'string' ? { description: b.description } : {}),
        runtimeVersion: typeof b.runtimeVersion === 'string' ? b.runtimeVersion : 'vmcontext',
      })
    ).resource;
    await createMembership(deps, projectId, {
      user: referenceTo(bot),
      profile: referenceTo(bot),
      ...(accessPolicy ? { accessPolicy } : {}),
    });
    return reply.code(201).header('content-type', 'application/fhir+json').send(bot);
  });

  // Secrets and sites replace the project's lists (ProjectSetting[], site[]).
  app.post('/admin/projects/:projectId/secrets', async (request: P<{ projectId: string }>, reply) => {
    const { project } = await requireProjectAdmin(auth, request, request.params.projectId);
    const secret = settings(request.body, 'secret');
    const updated = await deps
      .systemRepo(project.id)
      .updateResource<Project>(withList(await currentProject(auth, project), 'secret', secret));
    return reply.send(updated.resource);
  });

  app.post('/admin/projects/:projectId/sites', async (request: P<{ projectId: string }>, reply) => {
    const { project } = await requireProjectAdmin(auth, request, request.params.projectId);
    const site = request.body;
    if (!Array.isArray(site) || !site.every((s) => s && typeof s.name === 'string' && Array.isArray(s.domain))) {
      fail(badRequest('sites must be an array of { name, domain[] }', 'site'));
    }
    const updated = await deps
      .systemRepo(project.id)
      .updateResource<Project>(withList(await currentProject(auth, project), 'site', site));
    return reply.send(updated.resource);
  });

  app.get(
    '/admin/projects/:projectId/members/:membershipId',
    async (request: P<{ projectId: string; membershipId: string }>, reply) => {
      const { project } = await requireProjectAdmin(auth, request, request.params.projectId);
      return reply.send(await memberOf(auth, project, request.params.membershipId));
    },
  );

  app.post(
    '/admin/projects/:projectId/members/:membershipId',
    async (request: P<{ projectId: string; membershipId: string }>, reply) => {
      const { caller, project } = await requireProjectAdmin(auth, request, request.params.projectId);
      const current = await memberOf(auth, project, request.params.membershipId);
      const b = body(request);
      const display = (b.profile as Reference | undefined)?.display;
      if (
        b.profile !== undefined &&
        (typeof b.profile !== 'object' || (display !== undefined && typeof display !== 'string'))
      ) {
        fail(badRequest('profile must be { display }', 'profile'));
      }
      const accessPolicy =
        b.accessPolicy === null
          ? undefined
          : (optionalReference(b.accessPolicy, 'accessPolicy', 'AccessPolicy') ?? current.accessPolicy);
      await checkPolicy(auth, project.id as string, accessPolicy);
      const next: ProjectMembership = {
        ...current,
        // The user, project and profile of a membership never change here.
        ...(typeof b.admin === 'boolean' ? { admin: b.admin } : {}),
        ...(typeof b.active === 'boolean' ? { active: b.active } : {}),
        ...(typeof b.userName === 'string' ? { userName: b.userName } : {}),
        ...(typeof b.externalId === 'string' ? { externalId: b.externalId } : {}),
        ...(Array.isArray(b.access) ? { access: b.access as ProjectMembership['access'] } : {}),
      };
      // Of the profile, only its label may change (what admin lists show); empty removes it.
      if (typeof display === 'string' && current.profile) {
        const { display: _old, ...reference } = current.profile;
        next.profile = display.trim() ? { ...reference, display: display.trim() } : reference;
      }
      if (accessPolicy) {
        next.accessPolicy = accessPolicy;
      } else {
        delete next.accessPolicy;
      }
      if (isOwner(project, current) && (next.admin === false || next.active === false)) {
        fail(forbiddenWith("The project owner's membership stays an active admin"));
      }
      const demoted = isActiveAdmin(current) && !isActiveAdmin(next);
      if (demoted && current.id === caller.membership.id) {
        fail(forbiddenWith('You cannot remove your own admin rights or deactivate your own membership'));
      }
      if (demoted) {
        await assertAnotherAdmin(auth, project, current);
      }
      return reply.send((await deps.systemRepo(project.id).updateResource(next)).resource);
    },
  );

  app.delete(
    '/admin/projects/:projectId/members/:membershipId',
    async (request: P<{ projectId: string; membershipId: string }>, reply) => {
      const { caller, project } = await requireProjectAdmin(auth, request, request.params.projectId);
      const current = await memberOf(auth, project, request.params.membershipId);
      if (isOwner(project, current)) {
        fail(forbiddenWith("The project owner's membership cannot be removed"));
      }
      if (current.id === caller.membership.id) {
        fail(forbiddenWith('You cannot remove your own membership'));
      }
      if (isActiveAdmin(current)) {
        await assertAnotherAdmin(auth, project, current);
      }
      await deps.systemRepo(project.id).deleteResource('ProjectMembership', current.id as string);
      return reply.code(200).send({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'information', code: 'informational', details: { text: 'Membership removed' } }],
      });
    },
  );

  await superAdminRoutes(app, auth, options.super);
}

function isOwner(project: Project, membership: ProjectMembership): boolean {
  return Boolean(project.owner?.reference) && project.owner?.reference === membership.user?.reference;
}

function isActiveAdmin(membership: ProjectMembership): boolean {
  return membership.admin === true && membership.active !== false;
}

/** A project keeps at least one active admin (a super admin acting from elsewhere could otherwise orphan it). */
async function assertAnotherAdmin(auth: AuthModule, project: Project, leaving: ProjectMembership): Promise<void> {
  const memberships = await findProjectMemberships(auth.deps.pool, project.id as string);
  if (!memberships.some((m) => m.id !== leaving.id && isActiveAdmin(m))) {
    fail(forbiddenWith('A project keeps at least one active admin: make another member an admin first'));
  }
}

async function currentProject(auth: AuthModule, project: Project): Promise<Project> {
  return (await readByReference<Project>(auth.deps.pool, `Project/${project.id}`)) ?? project;
}

/** A membership of this project (404 for any other, whatever it is). */
async function memberOf(auth: AuthModule, project: Project, membershipId: string): Promise<ProjectMembership> {
  const membership = isValidId(membershipId)
    ? await readByReference<ProjectMembership>(auth.deps.pool, `ProjectMembership/${membershipId}`)
    : undefined;
  if (!membership || membership.meta?.project !== project.id) {
    fail(notFoundWith('Membership not found'));
  }
  return membership;
}
