import { setTimeout as sleep } from 'node:timers/promises';
import { authenticator } from 'otplib';

const STEP_MS = 30_000;
/** A code handed out must stay valid this long: the request that carries it is still to be sent. */
const MARGIN_MS = 5_000;
const spent = new Map<string, Set<number>>();

/**
 * A valid TOTP code of `secret` that no earlier call returned. The server spends each code once
 * (a replay is refused), so a test that signs in several times within 30 s needs the code of
 * another time step: the current one first, then the next and the previous (the server allows one
 * step of drift either way). When every such code was handed out, it waits for the next step
 * rather than fail: a flow using three codes may start late in a step.
 */
export async function freshTotp(secret: string): Promise<string> {
  const used = spent.get(secret) ?? new Set<number>();
  spent.set(secret, used);
  for (;;) {
    const now = Date.now();
    const step = Math.floor(now / STEP_MS);
    // The server takes a code of step c while its own step is c - 1, c or c + 1.
    const validAWhile = (c: number) => (c - 1) * STEP_MS <= now && now + MARGIN_MS < (c + 2) * STEP_MS;
    const pick = [step, step + 1, step - 1].find((s) => !used.has(s) && validAWhile(s));
    if (pick !== undefined) {
      used.add(pick);
      return authenticator.clone({ epoch: pick * STEP_MS + 1_000 }).generate(secret);
    }
    await sleep((step + 1) * STEP_MS - now + 50);
  }
}
