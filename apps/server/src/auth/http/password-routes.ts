import type { FastifyInstance } from 'fastify';
import { allOk, badRequest, fail, isValidId } from '@hearth/core';
import type { AuthModule } from '../module.js';
import { appBaseUrl } from '../deps.js';
import { checkNewPassword, generateSecret, hashPassword, secretsEqual, verifyPassword } from '../passwords.js';
import { normalizeEmail } from '../projects.js';
import { findUserByEmail, readByReference } from '../store.js';
import type { User, UserSecurityRequest } from '../types.js';
import { objectBody, optionalString, requiredString } from './common.js';

/** A reset link is valid this long. */
const RESET_LIFETIME_MS = 60 * 60 * 1000;

/**
 * A password reset or invitation request, and the email with its link to the app's
 * `/setpassword/{id}/{secret}` page. Returns the link (admin invites show it when not emailing).
 */
export async function sendSetPasswordEmail(
  auth: AuthModule,
  user: User,
  type: 'reset' | 'invite',
  options: { send?: boolean; redirectUri?: string } = {},
): Promise<string> {
  const deps = auth.deps;
  const request = (
    await deps.systemRepo().createResource<UserSecurityRequest>({
      resourceType: 'UserSecurityRequest',
      type,
      user: { reference: `User/${user.id}` },
      secret: generateSecret(24),
      expiresAt: new Date(Date.now() + (type === 'invite' ? 7 * 24 : 1) * RESET_LIFETIME_MS).toISOString(),
      ...(options.redirectUri ? { redirectUri: options.redirectUri } : {}),
    })
  ).resource;
  const link = `${appBaseUrl(deps.config)}setpassword/${request.id}/${request.secret}`;
  if (options.send !== false && user.email) {
    const subject = type === 'invite' ? 'Welcome to Hearth' : 'Reset your Hearth password';
    const text =
      type === 'invite'
        ? `You have been invited to Hearth.\n\nSet your password and sign in:\n${link}\n\nThe link is valid for 7 days.`
        : `Someone asked to reset the password of ${user.email}.\n\nSet a new password:\n${link}\n\nThe link is valid for one hour. If it was not you, ignore this email.`;
    try {
      await deps.mailer.send({ to: user.email, subject, text });
    } catch (err) {
      // The request stands (an admin can resend); a relay outage must not undo an invitation.
      deps.logger.error({ err, to: user.email }, 'could not send the set-password email');
    }
  }
  return link;
}

/** Change, reset and set password (CONTRACTS.md). */
export async function passwordRoutes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const deps = auth.deps;

  app.post('/auth/changepassword', async (request, reply) => {
    const caller = await auth.authenticator.require(request);
    const body = objectBody(request);
    const user = caller.user as User;
    if (user.resourceType !== 'User') {
      fail(badRequest('Only users have passwords'));
    }
    const current = await readByReference<User>(deps.pool, `User/${user.id}`);
    if (!(await verifyPassword(requiredString(body, 'oldPassword'), current?.passwordHash))) {
      fail(badRequest('Incorrect password', 'oldPassword'));
    }
    const passwordHash = await hashPassword(checkNewPassword(body.newPassword, 'newPassword'));
    await deps.systemRepo(current?.meta?.project).updateResource({ ...(current as User), passwordHash });
    return reply.send(allOk);
  });

  // Always answers OK: whether an account exists is not told to whoever asks.
  app.post('/auth/resetpassword', async (request, reply) => {
    const body = objectBody(request);
    const email = normalizeEmail(body.email);
    const projectId = optionalString(body, 'projectId');
    const user = await findUserByEmail(deps.pool, email, projectId && isValidId(projectId) ? projectId : undefined);
    if (user) {
      await sendSetPasswordEmail(auth, user, 'reset', { redirectUri: optionalString(body, 'redirectUri') });
    }
    return reply.send(allOk);
  });

  app.post('/auth/setpassword', async (request, reply) => {
    const body = objectBody(request);
    const id = requiredString(body, 'id');
    const secret = requiredString(body, 'secret');
    const password = checkNewPassword(body.password);
    const usr = isValidId(id)
      ? await readByReference<UserSecurityRequest>(deps.pool, `UserSecurityRequest/${id}`)
      : undefined;
    if (!usr || !secretsEqual(secret, usr.secret)) {
      fail(badRequest('Invalid or expired link', 'secret'));
    }
    if (usr.used) {
      fail(badRequest('This link was already used', 'secret'));
    }
    if (usr.expiresAt && Date.parse(usr.expiresAt) < Date.now()) {
      fail(badRequest('Invalid or expired link', 'secret'));
    }
    const user = await readByReference<User>(deps.pool, usr.user.reference);
    if (!user) {
      fail(badRequest('User not found'));
    }
    // Mark the link used first (If-Match): two concurrent uses cannot both set a password.
    try {
      await deps.systemRepo().updateResource({ ...usr, used: true }, { ifMatch: Number(usr.meta?.versionId) });
    } catch {
      fail(badRequest('This link was already used', 'secret'));
    }
    await deps.systemRepo(user.meta?.project).updateResource({
      ...user,
      passwordHash: await hashPassword(password),
      emailVerified: true,
    });
    return reply.send(allOk);
  });
}
