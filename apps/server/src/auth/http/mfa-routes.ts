import type { FastifyInstance, FastifyRequest } from 'fastify';
import { allOk, badRequest, fail } from '@hearth/core';
import type { AuthModule } from '../module.js';
import { nextStep, readPendingLogin } from '../login-flow.js';
import { assertTotp, enrolment, generateTotpSecret, verifySignInFactor } from '../mfa.js';
import { readByReference } from '../store.js';
import type { Login, User } from '../types.js';
import { objectBody, sendNoStore } from './common.js';

/** TOTP second factor: enrol, verify during sign-in, disable. */
export async function mfaRoutes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const deps = auth.deps;

  async function currentUser(request: FastifyRequest): Promise<User> {
    const caller = await auth.authenticator.require(request);
    const user = await readByReference<User>(deps.pool, `User/${caller.user.id}`);
    if (!user || user.resourceType !== 'User') {
      fail(badRequest('Only users have a second factor'));
    }
    return user;
  }

  async function saveUser(user: User): Promise<User> {
    return (await deps.systemRepo(user.meta?.project).updateResource(user)).resource;
  }

  // Enrolment status; when not enrolled, the secret to enrol with (otpauth URI for an authenticator app).
  app.get('/auth/mfa/status', async (request, reply) => {
    let user = await currentUser(request);
    if (user.mfaEnrolled) {
      return sendNoStore(reply, 200, { enrolled: true });
    }
    if (!user.mfaSecret) {
      user = await saveUser({ ...user, mfaSecret: generateTotpSecret() });
    }
    return sendNoStore(reply, 200, { enrolled: false, ...(await enrolment(user, user.mfaSecret as string)) });
  });

  app.post('/auth/mfa/enroll', async (request, reply) => {
    const user = await currentUser(request);
    if (user.mfaEnrolled) {
      fail(badRequest('Already enrolled'));
    }
    await assertTotp(deps.pool, user, objectBody(request).token);
    await saveUser({ ...user, mfaEnrolled: true });
    return reply.send(allOk);
  });

  app.post('/auth/mfa/disable', async (request, reply) => {
    const user = await currentUser(request);
    if (!user.mfaEnrolled) {
      fail(badRequest('Not enrolled'));
    }
    await assertTotp(deps.pool, user, objectBody(request).token);
    const { mfaSecret: _secret, ...rest } = user;
    await saveUser({ ...rest, mfaEnrolled: false } as User);
    return reply.send(allOk);
  });

  /** The second factor of a sign-in in progress; `enrol` when the user enrols on the way. */
  async function verifyLogin(login: Login, token: unknown, enrol: boolean): Promise<unknown> {
    const user = await readByReference<User>(deps.pool, login.user.reference);
    if (!user || user.resourceType !== 'User') {
      fail(badRequest('Login has no user', 'login'));
    }
    const verified = await verifySignInFactor(deps, login, user, token, enrol);
    return nextStep(deps, verified, { ...user, mfaEnrolled: user.mfaEnrolled || enrol });
  }

  app.post('/auth/mfa/verify', async (request, reply) => {
    const body = objectBody(request);
    const login = await readPendingLogin(deps, body.login);
    return sendNoStore(reply, 200, await verifyLogin(login, body.token, false));
  });

  app.post('/auth/mfa/login-enroll', async (request, reply) => {
    const body = objectBody(request);
    const login = await readPendingLogin(deps, body.login);
    return sendNoStore(reply, 200, await verifyLogin(login, body.token, true));
  });
}
