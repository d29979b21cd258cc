/**
 * OperationOutcome builders and helpers, shared by the server and the SDK.
 * Every error a user can cause is one of these (hl7.org/fhir/R4/operationoutcome.html).
 * The outcome's `id` names the kind of result so that a status can be derived from it.
 */
import type { OperationOutcome, OperationOutcomeIssue } from './fhir-types.js';

export type IssueSeverity = OperationOutcomeIssue['severity'];
export type IssueType = OperationOutcomeIssue['code'];

const STATUS_BY_ID: Record<string, number> = {
  ok: 200,
  created: 201,
  accepted: 202,
  'not-modified': 304,
  'bad-request': 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  'method-not-allowed': 405,
  'not-acceptable': 406,
  conflict: 409,
  gone: 410,
  'precondition-failed': 412,
  'payload-too-large': 413,
  'unsupported-media-type': 415,
  'unprocessable-entity': 422,
  'too-many-requests': 429,
  'server-error': 500,
  'service-unavailable': 503,
};

function outcome(
  id: string,
  severity: IssueSeverity,
  code: IssueType,
  text: string,
  expression?: string,
): OperationOutcome {
  const issue: OperationOutcomeIssue = { severity, code, details: { text } };
  if (expression) {
    issue.expression = [expression];
  }
  return { resourceType: 'OperationOutcome', id, issue: [issue] };
}

export const allOk: OperationOutcome = outcome('ok', 'information', 'informational', 'All OK');
export const created: OperationOutcome = outcome('created', 'information', 'informational', 'Created');
export const accepted = (text = 'Accepted'): OperationOutcome =>
  outcome('accepted', 'information', 'informational', text);
export const notModified: OperationOutcome = outcome('not-modified', 'information', 'informational', 'Not Modified');
export const unauthorized: OperationOutcome = outcome('unauthorized', 'error', 'login', 'Unauthorized');
export const forbidden: OperationOutcome = outcome('forbidden', 'error', 'forbidden', 'Forbidden');
export const gone: OperationOutcome = outcome('gone', 'error', 'deleted', 'Gone');
export const notFound: OperationOutcome = outcome('not-found', 'error', 'not-found', 'Not found');
export const tooManyRequests: OperationOutcome = outcome(
  'too-many-requests',
  'error',
  'throttled',
  'Too many requests',
);

export function badRequest(text: string, expression?: string): OperationOutcome {
  return outcome('bad-request', 'error', 'invalid', text, expression);
}
export function notFoundWith(text: string): OperationOutcome {
  return outcome('not-found', 'error', 'not-found', text);
}
export function goneWith(text: string): OperationOutcome {
  return outcome('gone', 'error', 'deleted', text);
}
export function unauthorizedWith(text: string): OperationOutcome {
  return outcome('unauthorized', 'error', 'login', text);
}
export function forbiddenWith(text: string): OperationOutcome {
  return outcome('forbidden', 'error', 'forbidden', text);
}
export function conflict(text: string, code: IssueType = 'conflict', expression?: string): OperationOutcome {
  return outcome('conflict', 'error', code, text, expression);
}
export function preconditionFailed(text = 'Precondition Failed'): OperationOutcome {
  return outcome('precondition-failed', 'error', 'conflict', text);
}
export function methodNotAllowed(text = 'Method not allowed'): OperationOutcome {
  return outcome('method-not-allowed', 'error', 'not-supported', text);
}
export function notAcceptable(text: string): OperationOutcome {
  return outcome('not-acceptable', 'error', 'not-supported', text);
}
export function unsupportedMediaType(text: string): OperationOutcome {
  return outcome('unsupported-media-type', 'error', 'not-supported', text);
}
export function payloadTooLarge(text: string): OperationOutcome {
  return outcome('payload-too-large', 'error', 'too-costly', text);
}
export function unprocessable(text: string, expression?: string): OperationOutcome {
  return outcome('unprocessable-entity', 'error', 'business-rule', text, expression);
}
export function tooManyRequestsWith(text: string): OperationOutcome {
  return outcome('too-many-requests', 'error', 'throttled', text);
}
export function tooCostly(text: string): OperationOutcome {
  return outcome('bad-request', 'error', 'too-costly', text);
}
export function serverError(err?: unknown): OperationOutcome {
  // The message of an unexpected error is not shown: it may hold internals.
  void err;
  return outcome('server-error', 'error', 'exception', 'Internal server error');
}
export function serviceUnavailable(text: string): OperationOutcome {
  return outcome('service-unavailable', 'error', 'transient', text);
}

/** One issue per problem, each with the FHIRPath of the element it concerns. */
export function validationError(issues: OperationOutcomeIssue[] | string, expression?: string): OperationOutcome {
  if (typeof issues === 'string') {
    return outcome('bad-request', 'error', 'invalid', issues, expression);
  }
  return { resourceType: 'OperationOutcome', id: 'bad-request', issue: issues };
}

export function createIssue(
  code: IssueType,
  text: string,
  expression?: string,
  severity: IssueSeverity = 'error',
): OperationOutcomeIssue {
  const issue: OperationOutcomeIssue = { severity, code, details: { text } };
  if (expression) {
    issue.expression = [expression];
  }
  return issue;
}

/** The HTTP status an outcome stands for. */
export function getStatus(o: OperationOutcome): number {
  if (o.id && STATUS_BY_ID[o.id] !== undefined) {
    return STATUS_BY_ID[o.id];
  }
  const hasError = o.issue?.some((i) => i.severity === 'error' || i.severity === 'fatal');
  return hasError ? 400 : 200;
}

export function isOperationOutcome(value: unknown): value is OperationOutcome {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { resourceType?: unknown }).resourceType === 'OperationOutcome'
  );
}

export function isOk(o: OperationOutcome): boolean {
  const status = getStatus(o);
  return status >= 200 && status < 300;
}
export function isCreated(o: OperationOutcome): boolean {
  return o.id === 'created';
}
export function isNotFound(o: OperationOutcome): boolean {
  return o.id === 'not-found';
}
export function isGone(o: OperationOutcome): boolean {
  return o.id === 'gone';
}

/** A thrown error that carries the OperationOutcome to answer with. */
export class OperationOutcomeError extends Error {
  readonly outcome: OperationOutcome;
  constructor(o: OperationOutcome, cause?: unknown) {
    super(operationOutcomeToString(o), cause === undefined ? undefined : { cause });
    this.name = 'OperationOutcomeError';
    this.outcome = o;
  }
  get status(): number {
    return getStatus(this.outcome);
  }
}

export function operationOutcomeToString(o: OperationOutcome): string {
  const parts = (o.issue ?? []).map((issue) => {
    const text = issue.details?.text ?? issue.diagnostics ?? issue.code;
    return issue.expression?.length ? `${text} (${issue.expression.join(', ')})` : text;
  });
  return parts.join('; ') || 'Unknown error';
}

/** Turns anything thrown or returned into a readable sentence. */
export function normalizeErrorString(err: unknown): string {
  if (!err) {
    return 'Unknown error';
  }
  if (typeof err === 'string') {
    return err;
  }
  if (err instanceof OperationOutcomeError) {
    return operationOutcomeToString(err.outcome);
  }
  if (isOperationOutcome(err)) {
    return operationOutcomeToString(err);
  }
  if (err instanceof Error) {
    return err.message;
  }
  if (typeof err === 'object') {
    const o = err as Record<string, unknown>;
    for (const key of ['error_description', 'message', 'error', 'code']) {
      if (typeof o[key] === 'string') {
        return o[key] as string;
      }
    }
  }
  return JSON.stringify(err);
}

/** Throws the outcome as an error; a terse way to bail out inside handlers. */
export function fail(o: OperationOutcome): never {
  throw new OperationOutcomeError(o);
}
