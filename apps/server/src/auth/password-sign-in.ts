import type { AuthDeps } from './deps.js';
import { auditLogin } from './audit.js';
import { recordFailure, recordSuccess } from './brute-force.js';
import type { RequestInfo } from './login-flow.js';
import { verifyPassword } from './passwords.js';
import { findUserByEmail } from './store.js';
import type { User } from './types.js';

export interface PasswordSignIn {
  /** Trimmed and lower-cased. */
  email: string;
  password: string;
  /** A project's own users (scoped sign-in); otherwise the server's. */
  projectId?: string;
  /** How the sign-in came (`password`, `authorize`), for the audit trail. */
  method: string;
  info: RequestInfo;
}

/**
 * Checks an email and password the way every password sign-in does: a failure counts towards the
 * account's lock and is audited, a success clears the count and is audited. Answers the user, or
 * undefined when the email or the password is wrong (the caller says so without telling which).
 * The caller checks the lock first (`assertNotLocked`), answering in its own format.
 */
export async function checkPasswordSignIn(deps: AuthDeps, input: PasswordSignIn): Promise<User | undefined> {
  const { email, method, info } = input;
  const user = email ? await findUserByEmail(deps.pool, email, input.projectId) : undefined;
  if (!(await verifyPassword(input.password, user?.passwordHash))) {
    await recordFailure(deps, email);
    await auditLogin(deps, {
      outcome: 'failure',
      email,
      userId: user?.id,
      method,
      reason: 'invalid password',
      ...info,
    });
    return undefined;
  }
  await recordSuccess(deps, email);
  await auditLogin(deps, { outcome: 'success', email, userId: user?.id, method, ...info });
  return user;
}
