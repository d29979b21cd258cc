import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, fail, isValidId, notFoundWith, type Resource } from '@hearth/core';
import type { AuthModule } from '../module.js';
import { assertNotLocked } from '../brute-force.js';
import { checkPasswordSignIn } from '../password-sign-in.js';
import { checkLoginParams, chooseMembershipById, loadClient, readPendingLogin, startLogin } from '../login-flow.js';
import { normalizeEmail } from '../projects.js';
import { usesExternalSignIn } from '../external-idp.js';
import { findDomainConfiguration, readByReference } from '../store.js';
import type { ClientApplication, Login, User } from '../types.js';
import { loginParams, objectBody, requestInfo, requiredString, sendNoStore } from './common.js';

/** The sign-in flow of CONTRACTS.md: /auth/login, /auth/profile and their helpers. */
export async function loginRoutes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const deps = auth.deps;

  // POST /auth/login: email + password, then the next step (code, profile choice, or second factor).
  app.post('/auth/login', async (request, reply) => {
    const body = objectBody(request);
    const email = normalizeEmail(body.email);
    const password = requiredString(body, 'password');
    const params = loginParams(body);
    const client = await loadClient(deps, params.clientId);
    checkLoginParams(params, client);
    await assertNotLocked(deps, email);
    const info = requestInfo(request);
    const user = await checkPasswordSignIn(deps, {
      email,
      password,
      projectId: params.projectId,
      method: 'password',
      info,
    });
    if (!user) {
      fail(badRequest('Email or password is invalid'));
    }
    const result = await startLogin(deps, { user, authMethod: 'password', params, client, info });
    return sendNoStore(reply, 200, result);
  });

  // POST /auth/profile: choose one of the user's memberships.
  app.post('/auth/profile', async (request, reply) => {
    const body = objectBody(request);
    const login = await readPendingLogin(deps, body.login);
    return sendNoStore(reply, 200, await chooseMembershipById(deps, login, body.profile));
  });

  // GET /auth/login/{login}: the state of a sign-in in progress.
  app.get('/auth/login/:login', async (request: FastifyRequest<{ Params: { login: string } }>, reply) => {
    const id = request.params.login;
    const login = isValidId(id) ? await readByReference<Login>(deps.pool, `Login/${id}`) : undefined;
    if (!login || login.granted || login.revoked) {
      fail(notFoundWith('Login not found'));
    }
    const client = login.client
      ? await readByReference<ClientApplication>(deps.pool, login.client.reference)
      : undefined;
    return sendNoStore(reply, 200, {
      id: login.id,
      user: login.user,
      client: client ? { id: client.id, name: client.name } : undefined,
      project: login.project,
      scope: login.scope,
      mfaVerified: login.mfaVerified === true,
      membership: login.membership,
    });
  });

  // GET /auth/clientinfo/{clientId}: what a sign-in page shows about the client.
  app.get('/auth/clientinfo/:clientId', async (request: FastifyRequest<{ Params: { clientId: string } }>, reply) => {
    const client = await loadClient(deps, request.params.clientId);
    return reply.send({
      clientId: client?.id,
      name: client?.name,
      description: client?.description,
      welcomeString: (client as { signInForm?: { welcomeString?: string } } | undefined)?.signInForm?.welcomeString,
    });
  });

  // POST /auth/method {email}: how this email's domain signs in (password, or an external IdP).
  app.post('/auth/method', async (request, reply) => {
    const email = normalizeEmail(objectBody(request).email);
    const domain = email.split('@')[1];
    const config = await findDomainConfiguration(deps.pool, domain);
    if (config?.identityProvider && usesExternalSignIn(config.identityProvider)) {
      return reply.send({
        domain,
        authorizeUrl: `${deps.config.baseUrl}auth/external/start?domain=${encodeURIComponent(domain)}`,
      });
    }
    return reply.send({ domain, method: 'password' });
  });

  // GET /auth/me: who the caller is, in which project, with what access.
  app.get('/auth/me', async (request, reply) => {
    const caller = await auth.authenticator.require(request);
    const profile = await readByReference<Resource>(deps.pool, caller.profile.reference);
    const config = caller.membership.userConfiguration
      ? await readByReference<Resource>(deps.pool, caller.membership.userConfiguration.reference)
      : undefined;
    const user = caller.user as User;
    const safeUser =
      user.resourceType === 'User'
        ? {
            resourceType: 'User',
            id: user.id,
            meta: user.meta,
            firstName: user.firstName,
            lastName: user.lastName,
            email: user.email,
            emailVerified: user.emailVerified,
            mfaEnrolled: user.mfaEnrolled === true,
            ...(user.project ? { project: user.project } : {}),
          }
        : { resourceType: user.resourceType, id: user.id, name: (user as { name?: string }).name };
    const project = caller.guard.redact(caller.project);
    const accessPolicy = caller.grants.length
      ? {
          resourceType: 'AccessPolicy',
          resource: caller.grants.flatMap((g) => g.policy.resource ?? []),
          ...(caller.ipRules.length ? { ipAccessRule: caller.ipRules } : {}),
        }
      : undefined;
    return reply.header('cache-control', 'no-store').send({
      user: safeUser,
      project,
      membership: caller.membership,
      profile,
      config: config ?? { resourceType: 'UserConfiguration', name: 'Default', menu: [] },
      accessPolicy,
      security: {
        mfaEnrolled: user.mfaEnrolled === true,
        login: {
          id: caller.login.id,
          authMethod: caller.login.authMethod,
          authTime: caller.login.authTime,
          scope: caller.scope,
        },
      },
    });
  });
}
