/**
 * Names the test that stalls its worker's event loop. A worker blocked for a minute cannot answer
 * vitest ("Timeout calling onTaskUpdate") and the run fails with no hint of which test did it; this
 * prints the test and the stall's length whenever the loop was blocked for more than STALL_MS, so
 * the culprit can be made asynchronous (a child process, or `breather()` in long loops).
 */
import { afterAll, beforeAll, expect } from 'vitest';

const TICK_MS = 1_000;
const STALL_MS = 20_000;

let timer: NodeJS.Timeout | undefined;

beforeAll(() => {
  let expected = Date.now() + TICK_MS;
  timer = setInterval(() => {
    const late = Date.now() - expected;
    expected = Date.now() + TICK_MS;
    if (late > STALL_MS) {
      const { currentTestName, testPath } = expect.getState();
      process.stderr.write(
        `[stall-watch] the event loop of the worker running ${testPath ?? '?'} (${currentTestName ?? 'a hook'}) was blocked for ${Math.round(late / 1000)} s\n`,
      );
    }
  }, TICK_MS);
  timer.unref();
});

afterAll(() => {
  clearInterval(timer);
});
