/**
 * What the CLI prints and how it ends: results on stdout, messages and progress on stderr, and
 * exit codes scripts can test (0 done, 1 failed, 2 not available on this server, 130 interrupted).
 */
import { isOperationOutcome, normalizeErrorString, OperationOutcomeError, type OperationOutcome } from '@hearth/core';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_UNAVAILABLE = 2;
export const EXIT_INTERRUPTED = 130;

/** A failure the CLI explains in its own words (and, when the server gave one, with its outcome). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
    readonly outcome?: OperationOutcome,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A response body on stdout: JSON pretty-printed, text as it came, nothing for an empty answer. */
export function printBody(body: unknown): void {
  if (body === undefined || body === null || body === '') {
    return;
  }
  if (typeof body === 'string') {
    process.stdout.write(body.endsWith('\n') ? body : `${body}\n`);
  } else if (body instanceof Uint8Array) {
    process.stdout.write(body);
  } else {
    printJson(body);
  }
}

/** A message for the user (stderr, so that stdout stays the result). */
export function info(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Columns padded to their widest cell; the last column is not padded. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The HTTP status an error stands for, when it came from the server. */
export function statusOf(err: unknown): number | undefined {
  return err instanceof OperationOutcomeError ? err.status : undefined;
}

/** True for the server's "there is no such route/operation here" answers. */
export function isNoRoute(err: unknown): boolean {
  const status = statusOf(err);
  return status === 404 || status === 405 || status === 501;
}

/** True when the server has no such endpoint at all ("No route for POST /admin/..."), not merely no such resource. */
export function isMissingRoute(err: unknown): boolean {
  return isNoRoute(err) && (statusOf(err) !== 404 || /no route/i.test((err as Error).message));
}

/**
 * Prints an error and returns the exit code. A server error prints its OperationOutcome (as JSON
 * when `json` is set, for the commands whose stdout is a server answer).
 */
export function reportError(err: unknown, options: { json?: boolean; verbose?: boolean } = {}): number {
  if (err instanceof ExitError) {
    return err.exitCode;
  }
  if (err instanceof CliError) {
    info(`Error: ${err.message}`);
    if (err.outcome && options.verbose) {
      info(JSON.stringify(err.outcome, null, 2));
    }
    return err.exitCode;
  }
  if (err instanceof OperationOutcomeError) {
    if (options.json) {
      info(JSON.stringify(err.outcome, null, 2));
    } else {
      const hint = err.status === 401 ? " (sign in again with 'hearth login')" : '';
      info(`Error: ${describeOutcome(err)}${hint}`);
    }
    return EXIT_FAILURE;
  }
  info(`Error: ${normalizeErrorString(err)}`);
  if (options.verbose && err instanceof Error && err.stack) {
    info(err.stack);
  }
  return EXIT_FAILURE;
}

/** "HTTP 404: Patient/x not found" for a server error; the message otherwise. */
export function describeOutcome(err: unknown): string {
  if (err instanceof OperationOutcomeError) {
    const status = err.status;
    return status ? `HTTP ${status}: ${err.message}` : err.message;
  }
  if (isOperationOutcome(err)) {
    return normalizeErrorString(err);
  }
  return normalizeErrorString(err);
}

/** Ends the command with an exit code; whatever had to be said has been printed already. */
export class ExitError extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
    this.name = 'ExitError';
  }
}
