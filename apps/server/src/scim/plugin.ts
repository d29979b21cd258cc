import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, conflict, fail, forbiddenWith, isValidId, notFoundWith, type Resource } from '@hearth/core';
import type { AuthModule } from '../auth/module.js';
import type { RequestAuth } from '../auth/authenticate.js';
import { errorToOutcome } from '../errors/to-outcome.js';
import { normalizeEmail } from '../auth/projects.js';
import { findProjectMemberships, readByReference, readManyByReference } from '../auth/store.js';
import type { Project, ProjectMembership, User } from '../auth/types.js';
import { invite } from '../admin/invite.js';
import { assertAdminScope } from '../auth/access/admin-scope.js';
import { matchesScimFilter, parseScimFilter } from './filter.js';

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SCIM_JSON = 'application/scim+json; charset=utf-8';

/** A SCIM User: a user's membership in the caller's project (RFC 7643 §4.1). */
export interface ScimUser {
  schemas: string[];
  id: string;
  externalId?: string;
  userName?: string;
  name: { givenName?: string; familyName?: string; formatted?: string };
  emails: { value: string; primary?: boolean; type?: string }[];
  active: boolean;
  userType?: string;
  meta: { resourceType: 'User'; lastModified?: string; location: string; version?: string };
}

type P = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>;

/** SCIM 2.0 /scim/v2/Users for the caller's project (project admins). */
export async function scimPlugin(app: FastifyInstance, options: { auth: AuthModule }): Promise<void> {
  const { auth } = options;
  const deps = auth.deps;
  const base = `${deps.config.baseUrl}scim/v2/Users/`;

  // SCIM clients read SCIM errors; the body is also an OperationOutcome, like every Hearth error.
  app.setErrorHandler((err, request, reply) => {
    const mapped = errorToOutcome(err);
    if (mapped.unexpected) {
      request.log.error({ err }, 'unexpected error');
    }
    if (mapped.retryAfterSeconds !== undefined) {
      reply.header('retry-after', String(mapped.retryAfterSeconds));
    }
    const detail = mapped.outcome.issue?.[0]?.details?.text ?? 'Error';
    return reply
      .code(mapped.status)
      .header('content-type', SCIM_JSON)
      .send({
        ...mapped.outcome,
        schemas: [ERROR_SCHEMA],
        status: String(mapped.status),
        detail,
        ...(mapped.outcome.issue?.[0]?.expression?.includes('filter') ? { scimType: 'invalidFilter' } : {}),
      });
  });

  async function caller(request: FastifyRequest): Promise<RequestAuth> {
    const c = await auth.authenticator.require(request);
    if (!c.projectAdmin && !c.superAdmin) {
      fail(forbiddenWith('SCIM is for project admins'));
    }
    assertAdminScope(c);
    return c;
  }

  function toScim(m: ProjectMembership, user: User | undefined): ScimUser {
    return {
      schemas: [USER_SCHEMA],
      id: m.id as string,
      ...((m.externalId ?? user?.externalId) ? { externalId: m.externalId ?? user?.externalId } : {}),
      userName: user?.email ?? m.userName,
      name: {
        givenName: user?.firstName,
        familyName: user?.lastName,
        formatted: [user?.firstName, user?.lastName].filter(Boolean).join(' ') || undefined,
      },
      emails: user?.email ? [{ value: user.email, primary: true, type: 'work' }] : [],
      active: m.active !== false,
      userType: m.profile?.reference?.split('/')[0],
      meta: {
        resourceType: 'User',
        lastModified: m.meta?.lastUpdated,
        location: base + m.id,
        version: `W/"${m.meta?.versionId}"`,
      },
    };
  }

  async function members(projectId: string): Promise<ScimUser[]> {
    const memberships = (await findProjectMemberships(deps.pool, projectId)).filter((m) =>
      m.user?.reference?.startsWith('User/'),
    );
    const users = await readManyByReference(
      deps.pool,
      memberships.map((m) => m.user.reference),
    );
    return memberships.map((m) => toScim(m, users.get(m.user.reference as string) as User | undefined));
  }

  async function membership(projectId: string, id: string): Promise<ProjectMembership> {
    const m = isValidId(id)
      ? await readByReference<ProjectMembership>(deps.pool, `ProjectMembership/${id}`)
      : undefined;
    if (!m || m.meta?.project !== projectId || !m.user?.reference?.startsWith('User/')) {
      fail(notFoundWith(`User ${id} not found`));
    }
    return m;
  }

  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).header('content-type', SCIM_JSON).send(JSON.stringify(body));

  app.get('/scim/v2/Users', async (request: P, reply) => {
    const c = await caller(request);
    const q = request.query;
    let list = await members(c.project.id as string);
    if (q.filter) {
      const filter = parseScimFilter(q.filter);
      list = list.filter((u) => matchesScimFilter(filter, u));
    }
    const startIndex = Math.max(1, Number.parseInt(q.startIndex ?? '1', 10) || 1);
    const count = Math.min(1000, Math.max(0, Number.parseInt(q.count ?? '100', 10) || 0));
    const page = list.slice(startIndex - 1, startIndex - 1 + count);
    return send(reply, 200, {
      schemas: [LIST_SCHEMA],
      totalResults: list.length,
      startIndex,
      itemsPerPage: page.length,
      Resources: page,
    });
  });

  app.get('/scim/v2/Users/:id', async (request: P, reply) => {
    const c = await caller(request);
    const m = await membership(c.project.id as string, request.params.id);
    return send(reply, 200, toScim(m, await readByReference<User>(deps.pool, m.user.reference)));
  });

  app.post('/scim/v2/Users', async (request: P, reply) => {
    const c = await caller(request);
    const b = scimBody(request);
    const email =
      (b.emails as { value?: string; primary?: boolean }[] | undefined)?.find((e) => e.primary)?.value ??
      (b.emails as { value?: string }[] | undefined)?.[0]?.value ??
      b.userName;
    const name = (b.name ?? {}) as { givenName?: string; familyName?: string };
    if (!email) {
      fail(badRequest('userName (an email) is required', 'userName'));
    }
    const project = (await readByReference<Project>(deps.pool, `Project/${c.project.id}`)) as Project;
    const userType =
      typeof b.userType === 'string' && ['Patient', 'Practitioner', 'RelatedPerson'].includes(b.userType)
        ? b.userType
        : 'Practitioner';
    let result;
    try {
      result = await invite(
        auth,
        project,
        {
          resourceType: userType as 'Practitioner',
          firstName: name.givenName ?? String(email).split('@')[0],
          lastName: name.familyName ?? '',
          email: normalizeEmail(email, 'userName'),
          externalId: typeof b.externalId === 'string' ? b.externalId : undefined,
          sendEmail: false,
          membership: { externalId: typeof b.externalId === 'string' ? b.externalId : undefined },
        },
        { reference: `${c.user.resourceType}/${c.user.id}` },
      );
    } catch (err) {
      if ((err as { status?: number }).status === 409) {
        fail(conflict('User already exists in this project'));
      }
      throw err;
    }
    let m = result.membership;
    if (b.active === false) {
      m = (await deps.systemRepo(project.id).updateResource({ ...m, active: false })).resource;
    }
    reply.header('location', base + m.id);
    return send(reply, 201, toScim(m, result.user));
  });

  /** Applies SCIM attribute changes: membership fields always, the user's only when it is this project's own. */
  async function applyChanges(
    projectId: string,
    m: ProjectMembership,
    changes: { active?: boolean; externalId?: string; givenName?: string; familyName?: string },
  ): Promise<ScimUser> {
    let user = await readByReference<User>(deps.pool, m.user.reference);
    const next: ProjectMembership = { ...m };
    if (changes.active !== undefined) {
      next.active = changes.active;
    }
    if (changes.externalId !== undefined) {
      next.externalId = changes.externalId;
    }
    const updated = (await deps.systemRepo(projectId).updateResource(next)).resource;
    if (
      user &&
      user.project?.reference === `Project/${projectId}` &&
      (changes.givenName !== undefined || changes.familyName !== undefined)
    ) {
      user = (
        await deps.systemRepo(projectId).updateResource({
          ...user,
          firstName: changes.givenName ?? user.firstName,
          lastName: changes.familyName ?? user.lastName,
        })
      ).resource;
    }
    return toScim(updated, user);
  }

  app.put('/scim/v2/Users/:id', async (request: P, reply) => {
    const c = await caller(request);
    const projectId = c.project.id as string;
    const m = await membership(projectId, request.params.id);
    const b = scimBody(request);
    const name = (b.name ?? {}) as { givenName?: string; familyName?: string };
    return send(
      reply,
      200,
      await applyChanges(projectId, m, {
        active: typeof b.active === 'boolean' ? b.active : true,
        externalId: typeof b.externalId === 'string' ? b.externalId : undefined,
        givenName: name.givenName,
        familyName: name.familyName,
      }),
    );
  });

  app.patch('/scim/v2/Users/:id', async (request: P, reply) => {
    const c = await caller(request);
    const projectId = c.project.id as string;
    const m = await membership(projectId, request.params.id);
    const b = scimBody(request);
    if (!Array.isArray(b.schemas) || !b.schemas.includes(PATCH_SCHEMA) || !Array.isArray(b.Operations)) {
      fail(badRequest(`A PatchOp (${PATCH_SCHEMA}) with Operations is required`));
    }
    const changes: { active?: boolean; externalId?: string; givenName?: string; familyName?: string } = {};
    for (const op of b.Operations as { op?: string; path?: string; value?: unknown }[]) {
      if (!['add', 'replace'].includes(String(op.op).toLowerCase())) {
        fail(badRequest(`Unsupported patch op "${op.op}"`, 'Operations'));
      }
      const entries: [string, unknown][] = op.path
        ? [[op.path, op.value]]
        : Object.entries((op.value ?? {}) as Record<string, unknown>);
      for (const [path, value] of entries) {
        const key = path.toLowerCase();
        if (key === 'active') {
          changes.active = value === true || value === 'true' || value === 'True';
        } else if (key === 'externalid') {
          changes.externalId = String(value);
        } else if (key === 'name.givenname') {
          changes.givenName = String(value);
        } else if (key === 'name.familyname') {
          changes.familyName = String(value);
        } else if (key === 'name' && value && typeof value === 'object') {
          changes.givenName = (value as { givenName?: string }).givenName;
          changes.familyName = (value as { familyName?: string }).familyName;
        }
      }
    }
    return send(reply, 200, await applyChanges(projectId, m, changes));
  });

  app.delete('/scim/v2/Users/:id', async (request: P, reply) => {
    const c = await caller(request);
    const projectId = c.project.id as string;
    const m = await membership(projectId, request.params.id);
    const project = await readByReference<Project>(deps.pool, `Project/${projectId}`);
    if (project?.owner?.reference === m.user.reference) {
      fail(forbiddenWith("The project owner's membership cannot be removed"));
    }
    await deps.systemRepo(projectId).deleteResource('ProjectMembership', m.id as string);
    return reply.code(204).send();
  });
}

function scimBody(request: FastifyRequest): Record<string, unknown> & Resource {
  const b = request.body;
  if (!b || typeof b !== 'object' || Array.isArray(b) || Buffer.isBuffer(b)) {
    fail(badRequest('Body must be a SCIM JSON object'));
  }
  return b as Record<string, unknown> & Resource;
}
