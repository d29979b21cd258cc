/**
 * One rule for suites that need something outside the repository (a browser, a Redis server): on a
 * developer's machine a missing one skips its suite with a warning; under CI (CI=true) it fails the
 * run, so that a green CI run has run every suite it claims. Data that is absent by design (the
 * shared test data beside the repository) is not such a requirement: those suites skip anywhere.
 */
import { spawnSync } from 'node:child_process';

/** Whether this is a CI run: CI set to anything but empty, 0 or false (as CI services set it). */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}

/**
 * True when `what` is present. When it is missing: under CI, throws (the test file fails, naming
 * what to install); elsewhere, warns and returns false, for `describe.runIf(...)`.
 */
export function requiredForSuite(
  what: string,
  present: boolean,
  install: string,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (present) {
    return true;
  }
  if (isCi(env)) {
    throw new Error(`${what} is missing, and CI=true: install it (${install}) instead of skipping its tests`);
  }
  console.warn(`${what} is missing: its tests are skipped (install it: ${install})`);
  return false;
}

/** Whether a command runs on this machine (`command --version` exits 0). */
export function commandRuns(command: string, args = ['--version']): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}
