import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { givenNodeFlags } from './node-flags.js';

/**
 * How far V8 lets the old generation grow past the live heap before its next full collection:
 * limit = live × (1 + percent / 100). See ARCHITECTURE.md, "Memory".
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Caps V8's heap growing factor at 1.5 unless the operator chose one (`--heap-growing-percent` on
 * the node command line or in NODE_OPTIONS). V8 derives the factor from the heap limit, which Node
 * derives from the machine's memory: on a machine with a few GB or more the factor is 4, so a server
 * with ~75 MB of live heap let garbage promoted out of in-flight requests pile up to ~300 MB of old
 * space before collecting it (measured: 418-498 MB resident at the end of the core benchmark, against
 * 280 MB with this cap). Set before start-up work so that the terminology load is bounded too.
 * Unlike `--max-old-space-size`, it never makes a large live heap fail: the limit follows what is live.
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): boolean {
  const chosen = givenNodeFlags(execArgv, nodeOptions).some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg));
  if (chosen) {
    return false;
  }
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}

/**
 * Runs one full garbage collection. Start-up work (the first load of the R4 terminology above all:
 * 22 MB of JSON parsed, indexed and written) leaves about 130 MB of garbage beside 60 MB of live
 * heap, and V8, whose heap limit that work raised, would keep it and grow on from there under
 * load (measured: 310 MB resident after a first start, 199 MB after this collection).
 * `--expose-gc` set now applies to contexts created afterwards, hence the fresh context.
 */
export function collectStartupGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
}
