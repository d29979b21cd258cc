// The request boundary's one check that no text reaches PostgreSQL that it cannot store (a NUL, an
// unpaired surrogate: see @hearth/core unstorableCharacter). Applied once per request: the URL and
// headers in an onRequest hook (app.ts), bodies where they are parsed (body.ts), so a JSON body is
// scanned as raw text and walked only when that scan finds a suspect escape.
import type { FastifyRequest } from 'fastify';
import { badRequest, findUnstorable, OperationOutcomeError, printableText, unstorableCharacter } from '@hearth/core';
import { OAuthError } from '../auth/oauth-error.js';

/** A 400 naming the parameter, header or element whose text cannot be stored. */
export class UnstorableInputError extends OperationOutcomeError {
  constructor(
    readonly text: string,
    readonly expression: string | undefined,
  ) {
    super(badRequest(text, expression));
  }

  /** The same refusal as an OAuth error (`invalid_request`), for the OAuth endpoints. */
  asOAuthError(): OAuthError {
    const err = new OAuthError('invalid_request', this.text);
    if (this.expression) {
      err.outcome.issue[0].expression = [this.expression];
    }
    return err;
  }
}

/** The OAuth 2.0 endpoints answer OAuth errors (CONTRACTS.md), under either prefix. */
const OAUTH_ROUTE = /^(?:\/api)?\/oauth2\//;

/** `err` as the route answers it: an OAuth error on the OAuth endpoints, else unchanged. */
export function inRouteShape(err: unknown, request: FastifyRequest): unknown {
  if (err instanceof UnstorableInputError && OAUTH_ROUTE.test(request.routeOptions?.url ?? '')) {
    return err.asOAuthError();
  }
  return err;
}

function refuse(subject: string, bad: string, expression: string | undefined): never {
  throw new UnstorableInputError(`${subject} contains ${bad}, which is not allowed`, expression);
}

/** Only these in a raw URL decode to an unstorable character (UTF-8 decoding never yields a surrogate). */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const URL_SUSPECT = /%00|[\u0000\ud800-\udfff]/;

/** The URL's query parameters and path segments, and every header value. */
export function assertStorableRequest(request: FastifyRequest): void {
  if (URL_SUSPECT.test(request.url)) {
    assertStorableFields(request.query, 'Query parameter');
    assertStorableFields(request.params, 'URL path segment');
  }
  const headers = request.headers;
  for (const name in headers) {
    const value = headers[name];
    const bad = typeof value === 'string' ? unstorableCharacter(value) : value && unstorableInList(value);
    if (bad) {
      refuse(`Header ${name}`, bad, `http.${name}`);
    }
  }
}

function unstorableInList(values: string[]): string | undefined {
  for (const value of values) {
    const bad = unstorableCharacter(value);
    if (bad) return bad;
  }
  return undefined;
}

/** Names and values of a parsed query string, route parameters or form (strings, or lists of them). */
function assertStorableFields(fields: unknown, subject: string): void {
  if (!fields || typeof fields !== 'object') return;
  for (const [name, value] of Object.entries(fields)) {
    const shown = printableText(name);
    const bad =
      unstorableCharacter(name) ??
      (typeof value === 'string'
        ? unstorableCharacter(value)
        : Array.isArray(value)
          ? unstorableInList(value)
          : undefined);
    if (bad) {
      refuse(`${subject} ${shown}`, bad, shown);
    }
  }
}

/** Every name and value of an application/x-www-form-urlencoded body. */
export function assertStorableForm(pairs: [string, string][]): void {
  for (const [name, value] of pairs) {
    const bad = unstorableCharacter(name) ?? unstorableCharacter(value);
    if (bad) {
      const shown = printableText(name);
      refuse(`Form field ${shown}`, bad, shown);
    }
  }
}

/**
 * The JSON escapes that decode to an unstorable character: `\u0000`, and a surrogate escape
 * without its partner. A match can be a false alarm (`\\u0000` is a backslash and "u0000"),
 * which the walk of the parsed value then clears.
 */
const SUSPECT_ESCAPE =
  /\\u0000|\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i;

/**
 * A parsed JSON body, given its raw text: refused with the FHIRPath-like path of the first string
 * (or property name) that cannot be stored, e.g. `Patient.name[0].family`. Only escapes need
 * looking for: the text was decoded from UTF-8 (which has no surrogates) and JSON refuses a raw
 * NUL. So the raw text is scanned once, and the parsed value walked only when the scan finds one.
 */
export function assertStorableJson(text: string, value: unknown): void {
  if (text.includes('\\u') && SUSPECT_ESCAPE.test(text)) {
    const found = findUnstorable(value);
    if (found) {
      const { path, what, inName } = found;
      const subject = inName ? (path ? `A property name in ${path}` : 'A property name') : path || 'The body';
      refuse(subject, what, path || undefined);
    }
  }
}
