import { authenticator } from 'otplib';
import QRCode from 'qrcode';
import { badRequest, fail } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import type { AuthDeps } from './deps.js';
import type { Login, LoginResponse, Project, User } from './types.js';
import { hitCounter } from './counters.js';
import { auditLogin } from './audit.js';

/** TOTP (RFC 6238): 30-second steps, one step of clock drift either way. */
authenticator.options = { window: 1 };

const ISSUER = 'Hearth';

/** True when the project asks every member for a second factor (Project.setting mfaRequired). */
export function projectRequiresMfa(project: Project | undefined): boolean {
  return (project?.setting ?? []).some((s) => s.name === 'mfaRequired' && s.valueBoolean === true);
}

export function otpauthUri(user: User, secret: string): string {
  return authenticator.keyuri(user.email ?? user.id ?? 'user', ISSUER, secret);
}

/**
 * What an app shows to enrol: the otpauth URI (for a link or manual entry) and the same as a QR
 * code image (a PNG data URL, ready for an <img src>), as the platform's clients expect.
 */
export async function enrolment(user: User, secret: string): Promise<{ enrollUri: string; enrollQrCode: string }> {
  const enrollUri = otpauthUri(user, secret);
  return { enrollUri, enrollQrCode: await QRCode.toDataURL(enrollUri) };
}

const STEP_MS = 30_000;

/** The time step (RFC 6238's counter) whose code `token` is, within the allowed drift; undefined when it is none. */
function matchedStep(secret: string | undefined, token: unknown, now: number): number | undefined {
  if (!secret || typeof token !== 'string' || !/^\d{6}$/.test(token)) {
    return undefined;
  }
  try {
    const delta = authenticator.checkDelta(token, secret);
    return delta === null ? undefined : Math.floor(now / STEP_MS) + delta;
  } catch {
    return undefined;
  }
}

/**
 * Checks a code and spends it: a code accepted once for this user is refused afterwards, even
 * inside its validity window (RFC 6238, section 5.2), so a code seen over someone's shoulder or
 * replayed from a captured request is worth nothing. Every server process shares the record.
 */
export async function spendTotp(
  db: Queryable,
  userId: string | undefined,
  secret: string | undefined,
  token: unknown,
  now = Date.now(),
): Promise<boolean> {
  const step = matchedStep(secret, token, now);
  if (step === undefined) {
    return false;
  }
  // The counter's window is the code's own time step, so the record is found whatever the clock says now.
  const { count } = await hitCounter(db, `mfa-used:${userId ?? ''}:${step}`, STEP_MS, step * STEP_MS);
  return count === 1;
}

export function generateTotpSecret(): string {
  return authenticator.generateSecret();
}

/**
 * The second-factor step of a sign-in, if one is due: verify (enrolled user), or enrol first
 * (user or project requires it). Undefined when the sign-in may go on.
 */
export async function mfaStep(
  deps: AuthDeps,
  login: Login,
  user: User,
  project: Project | undefined,
): Promise<LoginResponse | undefined> {
  if (login.mfaVerified) {
    return undefined;
  }
  if (user.mfaEnrolled && user.mfaSecret) {
    return { login: login.id as string, mfaRequired: true };
  }
  if (user.mfaRequired || projectRequiresMfa(project)) {
    const secret = user.mfaSecret ?? generateTotpSecret();
    if (!user.mfaSecret) {
      await deps.systemRepo(user.meta?.project).updateResource({ ...user, mfaSecret: secret });
    }
    return { login: login.id as string, mfaEnrollRequired: true, ...(await enrolment(user, secret)) };
  }
  return undefined;
}

export async function assertTotp(db: Queryable, user: User, token: unknown): Promise<void> {
  if (!(await spendTotp(db, user.id, user.mfaSecret, token))) {
    fail(badRequest('Invalid MFA token', 'token'));
  }
}

/**
 * Checks the second factor of a sign-in in progress and marks the login verified. Six digits
 * fall to guessing, so a sign-in gets five wrong codes, then it is revoked.
 */
export async function verifyLoginTotp(deps: AuthDeps, login: Login, user: User, token: unknown): Promise<Login> {
  if (!(await spendTotp(deps.pool, user.id, user.mfaSecret, token))) {
    const { count } = await hitCounter(deps.pool, `mfa-fail:${login.id}`, 15 * 60 * 1000);
    await auditLogin(deps, {
      outcome: 'failure',
      userId: user.id,
      email: user.email,
      method: 'mfa',
      reason: count >= 5 ? 'wrong second factor: sign-in revoked' : 'wrong second factor',
      remoteAddress: login.remoteAddress,
      userAgent: login.userAgent,
    });
    if (count >= 5) {
      await deps.systemRepo().updateResource({ ...login, revoked: true });
      fail(badRequest('Too many wrong MFA codes: sign in again', 'token'));
    }
    fail(badRequest('Invalid MFA token', 'token'));
  }
  return (
    await deps.systemRepo().updateResource({ ...login, mfaVerified: true }, { ifMatch: Number(login.meta?.versionId) })
  ).resource;
}

/**
 * The second factor of a sign-in in progress: checks the code, and when `enrol` (the user sets
 * up the authenticator on the way in) records the enrolment. Returns the verified login.
 */
export async function verifySignInFactor(
  deps: AuthDeps,
  login: Login,
  user: User,
  token: unknown,
  enrol: boolean,
): Promise<Login> {
  if (!enrol && !user.mfaEnrolled) {
    fail(badRequest('User is not enrolled in MFA', 'login'));
  }
  const verified = await verifyLoginTotp(deps, login, user, token);
  if (enrol && !user.mfaEnrolled) {
    await deps.systemRepo(user.meta?.project).updateResource({ ...user, mfaEnrolled: true });
  }
  return verified;
}
