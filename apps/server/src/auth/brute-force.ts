import { fail, tooManyRequestsWith } from '@hearth/core';
import type { AuthDeps } from './deps.js';
import { clearCounter, hitCounter, readCounter } from './counters.js';

const WINDOW_MS = 15 * 60 * 1000;

function key(email: string): string {
  return `login-fail:${email.toLowerCase()}`;
}

/** Refuses a sign-in for an account that failed too often in this 15-minute window (per account, all processes). */
export async function assertNotLocked(deps: AuthDeps, email: string): Promise<void> {
  const limit = deps.config.loginFailuresPerAccount;
  if (limit <= 0) {
    return;
  }
  const { count, resetAt } = await readCounter(deps.pool, key(email), WINDOW_MS);
  if (count >= limit) {
    const seconds = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
    fail(tooManyRequestsWith(`Too many failed sign-ins for this account; try again in ${seconds} seconds`));
  }
}

export async function recordFailure(deps: AuthDeps, email: string): Promise<void> {
  await hitCounter(deps.pool, key(email), WINDOW_MS);
}

export async function recordSuccess(deps: AuthDeps, email: string): Promise<void> {
  await clearCounter(deps.pool, key(email));
}
