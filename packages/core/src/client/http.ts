/**
 * The HTTP plumbing under the client: URLs, query strings, reading bodies, and turning an error
 * answer (or a failed connection) into an OperationOutcomeError.
 */
import type { OperationOutcome } from '../fhir-types.js';
import {
  badRequest,
  conflict,
  createIssue,
  forbiddenWith,
  getStatus,
  goneWith,
  isOperationOutcome,
  notFoundWith,
  OperationOutcomeError,
  payloadTooLarge,
  preconditionFailed,
  serviceUnavailable,
  tooManyRequestsWith,
  unauthorizedWith,
  unprocessable,
  unsupportedMediaType,
  methodNotAllowed,
} from '../outcome.js';

/** The default Accept header: FHIR JSON first, anything else if need be (CONTRACTS.md, Constants). */
export const DEFAULT_ACCEPT = 'application/fhir+json, */*; q=0.1';
export const FHIR_JSON = 'application/fhir+json';
export const JSON_PATCH = 'application/json-patch+json';
export const FORM_URLENCODED = 'application/x-www-form-urlencoded';

type QueryValue = string | number | boolean;

/** A search or query: a query string, URLSearchParams, name/value pairs, or an object of values. */
export type QueryTypes =
  | string
  | URLSearchParams
  | [string, QueryValue][]
  | Record<string, QueryValue | readonly QueryValue[] | undefined>
  | undefined;

/** The query as URLSearchParams; arrays repeat a parameter (AND), as FHIR search reads them. */
export function toSearchParams(query: QueryTypes): URLSearchParams {
  if (query === undefined) {
    return new URLSearchParams();
  }
  if (typeof query === 'string') {
    return new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  }
  if (query instanceof URLSearchParams) {
    return new URLSearchParams(query);
  }
  const params = new URLSearchParams();
  const entries = Array.isArray(query) ? query : Object.entries(query);
  for (const [key, value] of entries) {
    if (value === undefined) {
      continue;
    }
    for (const v of Array.isArray(value) ? value : [value]) {
      params.append(key, String(v));
    }
  }
  return params;
}

/** An absolute URL: `url` as is when absolute, otherwise resolved against the base (ending in '/'). */
export function resolveUrl(baseUrl: string, url: string | URL): string {
  const text = url.toString();
  if (/^[a-z][a-z0-9+.-]*:/i.test(text)) {
    return text;
  }
  return baseUrl + text.replace(/^\/+/, '');
}

/** Appends a query to a URL that may already have one. */
export function withQuery(url: string, query: QueryTypes): string {
  const params = toSearchParams(query).toString();
  if (!params) {
    return url;
  }
  return url + (url.includes('?') ? '&' : '?') + params;
}

/** Ensures a trailing slash, so that relative paths resolve below the base. */
export function ensureTrailingSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

export function isJsonContentType(contentType: string | null | undefined): boolean {
  if (!contentType) {
    return false;
  }
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json') || mediaType.endsWith('/json');
}

/** The body of a response: parsed JSON for JSON types, text otherwise, undefined when empty. */
export async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204 || response.status === 304) {
    return undefined;
  }
  const text = await response.text();
  if (!text) {
    return undefined;
  }
  if (isJsonContentType(response.headers.get('content-type'))) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/** The outcome an error status stands for, with the server's words when it gave any. */
function outcomeForStatus(status: number, text: string): OperationOutcome {
  switch (status) {
    case 400:
      return badRequest(text);
    case 401:
      return unauthorizedWith(text);
    case 403:
      return forbiddenWith(text);
    case 404:
      return notFoundWith(text);
    case 405:
      return methodNotAllowed(text);
    case 409:
      return conflict(text);
    case 410:
      return goneWith(text);
    case 412:
      return preconditionFailed(text);
    case 413:
      return payloadTooLarge(text);
    case 415:
      return unsupportedMediaType(text);
    case 422:
      return unprocessable(text);
    case 429:
      return tooManyRequestsWith(text);
    default:
      return status >= 500 ? serviceUnavailableOrError(status, text) : badRequest(text);
  }
}

function serviceUnavailableOrError(status: number, text: string): OperationOutcome {
  if (status === 503) {
    return serviceUnavailable(text);
  }
  // serverError() hides its text on purpose (server side); here the text is the server's own words.
  return { resourceType: 'OperationOutcome', id: 'server-error', issue: [createIssue('exception', text)] };
}

const STATUS_IDS: Record<number, string> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  406: 'not-acceptable',
  409: 'conflict',
  410: 'gone',
  412: 'precondition-failed',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  422: 'unprocessable-entity',
  429: 'too-many-requests',
  500: 'server-error',
  503: 'service-unavailable',
};

/**
 * The error for a failed response. An OperationOutcome body is kept as sent; when its id does not
 * already name the status (ids name the kind of result, see outcome.ts), the status's id is set so
 * that `isNotFound(err.outcome)` and `err.status` agree with the HTTP status.
 */
export function responseError(status: number, body: unknown): OperationOutcomeError {
  if (isOperationOutcome(body)) {
    const expected = STATUS_IDS[status] ?? (status >= 500 ? 'server-error' : 'bad-request');
    const outcome = getStatus(body) === status ? body : { ...body, id: expected };
    return new OperationOutcomeError(outcome);
  }
  let text = `HTTP ${status}`;
  if (typeof body === 'string' && body.trim()) {
    text = body.trim().slice(0, 500);
  } else if (body && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    // OAuth errors, plain { message } bodies, GraphQL { errors: [{ message }] }.
    const graphqlErrors = Array.isArray(o.errors) ? (o.errors as { message?: unknown }[]) : [];
    const said = o.error_description ?? o.message ?? o.error ?? graphqlErrors[0]?.message;
    if (typeof said === 'string') {
      text = said;
    }
  }
  return new OperationOutcomeError(outcomeForStatus(status, text));
}

/** The error for a request that got no answer at all (refused, reset, DNS, CORS). */
export function networkError(err: unknown): OperationOutcomeError {
  const message = err instanceof Error ? err.message : String(err);
  return new OperationOutcomeError(serviceUnavailable(`Network error: ${message}`), err);
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), as ms; undefined when absent. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) {
    return undefined;
  }
  const seconds = Number(header);
  if (Number.isFinite(seconds)) {
    return Math.max(0, seconds * 1000);
  }
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
