import sjson from 'secure-json-parse';
import { badRequest, OperationOutcomeError } from '@hearth/core';

/**
 * Parses a JSON body: rejects prototype-polluting keys and nesting deeper than maxDepth,
 * so no request body can exhaust the stack of later recursive code.
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') {
    throw new OperationOutcomeError(badRequest('Request body is empty'));
  }
  checkDepth(text, maxDepth);
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    throw new OperationOutcomeError(badRequest(`Malformed JSON: ${(err as Error).message}`), err);
  }
}

/** Scans the text once (outside strings) for bracket depth, before parsing. */
function checkDepth(text: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) {
        i++;
      } else if (c === 34 /* " */) {
        inString = false;
      }
    } else if (c === 34) {
      inString = true;
    } else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > maxDepth) {
        throw new OperationOutcomeError(badRequest(`JSON is nested deeper than ${maxDepth} levels`));
      }
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
}

/** Where a parsed form body keeps every name/value pair, repeated names included. */
const FORM_PAIRS = Symbol('formPairs');

/**
 * Parses an application/x-www-form-urlencoded body into an object of its names (the last value
 * of a repeated name wins, for callers that read single fields). Every pair, in order, stays
 * available through {@link formPairs}: POST _search needs repeated names (two `date=` AND).
 */
export function parseFormBody(text: string): Record<string, string> {
  const params = new URLSearchParams(text);
  const body = Object.fromEntries(params) as Record<string, string>;
  Object.defineProperty(body, FORM_PAIRS, { value: [...params], enumerable: false });
  return body;
}

/** The pairs of a body parsed by {@link parseFormBody}; undefined for any other body. */
export function formPairs(body: unknown): [string, string][] | undefined {
  if (!body || typeof body !== 'object') return undefined;
  return (body as { [FORM_PAIRS]?: [string, string][] })[FORM_PAIRS];
}
