import type { FastifyInstance } from 'fastify';
import { badRequest, fail, forbiddenWith, isValidId } from '@hearth/core';
import type { AuthModule } from '../module.js';
import { chooseMembership, loadClient, readPendingLogin, startLogin } from '../login-flow.js';
import { checkNewPassword } from '../passwords.js';
import {
  createMembership,
  createProfile,
  createProject,
  createUser,
  normalizeEmail,
  referenceTo,
} from '../projects.js';
import { readByReference } from '../store.js';
import type { Project, User } from '../types.js';
import { loginParams, objectBody, optionalString, requestInfo, requiredString, sendNoStore } from './common.js';

/** Self-service registration (switchable off: HEARTH_REGISTRATION_ENABLED). */
export async function registerRoutes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const deps = auth.deps;

  /** A project that takes patients who register themselves: it names their access policy. */
  async function openProject(projectId: string | undefined): Promise<Project | undefined> {
    if (!projectId) {
      return undefined;
    }
    const project = isValidId(projectId)
      ? await readByReference<Project>(deps.pool, `Project/${projectId}`)
      : undefined;
    if (!project?.defaultPatientAccessPolicy) {
      fail(forbiddenWith('This project does not take patient registrations'));
    }
    return project;
  }

  // POST /auth/newuser: a new user (server-wide; or of a project open to patient registration).
  app.post('/auth/newuser', async (request, reply) => {
    const body = objectBody(request);
    const params = loginParams(body);
    const project = await openProject(params.projectId);
    if (!deps.config.registrationEnabled && !project) {
      fail(forbiddenWith('Registration is disabled on this server'));
    }
    const email = normalizeEmail(body.email);
    const password = checkNewPassword(body.password);
    const firstName = requiredString(body, 'firstName');
    const lastName = requiredString(body, 'lastName');
    const client = await loadClient(deps, params.clientId);
    const user = await createUser(deps, { firstName, lastName, email, password, projectId: project?.id });
    const result = await startLogin(deps, { user, authMethod: 'password', params, client, info: requestInfo(request) });
    return sendNoStore(reply, 200, { login: result.login });
  });

  // POST /auth/newproject: the registering user's own project, with them as admin.
  app.post('/auth/newproject', async (request, reply) => {
    const body = objectBody(request);
    if (!deps.config.registrationEnabled) {
      fail(forbiddenWith('Registration is disabled on this server'));
    }
    const login = await readPendingLogin(deps, body.login);
    const projectName = requiredString(body, 'projectName');
    const user = await readByReference<User>(deps.pool, login.user.reference);
    if (!user || user.resourceType !== 'User' || user.project) {
      fail(badRequest('Only a server user can create a project', 'login'));
    }
    const created = await createProject(deps, {
      name: projectName,
      description: optionalString(body, 'description'),
      owner: user,
    });
    return sendNoStore(reply, 200, await chooseMembership(deps, login, created.membership));
  });

  // POST /auth/newpatient: the registering user becomes a patient of an open project.
  app.post('/auth/newpatient', async (request, reply) => {
    const body = objectBody(request);
    const login = await readPendingLogin(deps, body.login);
    const project = await openProject(requiredString(body, 'projectId'));
    const user = await readByReference<User>(deps.pool, login.user.reference);
    if (!user || user.resourceType !== 'User') {
      fail(badRequest('Login has no user', 'login'));
    }
    const projectId = project?.id as string;
    // A user registered for one project (User.project) does not become a member of another.
    if (user.project && user.project.reference !== `Project/${projectId}`) {
      fail(forbiddenWith('This user belongs to another project'));
    }
    const patient = await createProfile(deps, projectId, 'Patient', user.firstName, user.lastName, user.email);
    const membership = await createMembership(deps, projectId, {
      user: { reference: `User/${user.id}`, display: user.email },
      profile: referenceTo(patient),
      access: [
        {
          policy: project?.defaultPatientAccessPolicy as { reference: string },
          parameter: [{ name: 'patient', valueReference: { reference: `Patient/${patient.id}` } }],
        },
      ],
    });
    return sendNoStore(reply, 200, await chooseMembership(deps, login, membership));
  });
}
