import { authenticator } from 'otplib';

const STEP_MS = 30_000;
const spent = new Map<string, Set<number>>();

/**
 * A valid TOTP code of `secret` that no earlier call returned. The server spends each code once
 * (a replay is refused), so a test that signs in twice within 30 s needs the code of another
 * time step: the current one first, then the next and the previous (the server allows one step
 * of drift either way).
 */
export function freshTotp(secret: string, now = Date.now()): string {
  const step = Math.floor(now / STEP_MS);
  const used = spent.get(secret) ?? new Set<number>();
  spent.set(secret, used);
  // The server takes a code of step c while its own step is c - 1, c or c + 1: a code must stay
  // valid for a few seconds more (the previous step's expires at the end of this one).
  const validAWhile = (c: number) => (c - 1) * STEP_MS <= now && now + 5_000 < (c + 2) * STEP_MS;
  const pick = [step, step + 1, step - 1].find((s) => !used.has(s) && validAWhile(s));
  if (pick === undefined) {
    throw new Error('freshTotp: every code of this secret valid now was used (a replay); wait for the next 30 s step');
  }
  used.add(pick);
  return authenticator.clone({ epoch: pick * STEP_MS + 1_000 }).generate(secret);
}
