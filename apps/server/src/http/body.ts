import sjson from 'secure-json-parse';
import { badRequest, OperationOutcomeError } from '@hearth/core';
import { parseKeepingDecimals } from '../storage/decimal-json.js';
import { assertStorableForm, assertStorableJson } from './storable-input.js';

/**
 * Parses a JSON body: rejects prototype-polluting keys and nesting deeper than maxDepth,
 * so no request body can exhaust the stack of later recursive code, and any string the
 * database cannot store (naming where it is).
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') {
    throw new OperationOutcomeError(badRequest('Request body is empty'));
  }
  checkDepth(text, maxDepth);
  let value: unknown;
  try {
    // Decimals keep their written form (1.0, 1.50) through to the stored text: storage/decimal-json.ts.
    value = parseKeepingDecimals(text, parseJson);
  } catch (err) {
    if (text.includes('\0')) {
      locateRawNul(text);
    }
    throw new OperationOutcomeError(badRequest(`Malformed JSON: ${(err as Error).message}`), err);
  }
  assertStorableJson(text, value);
  return value;
}

function parseJson(text: string): unknown {
  return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
}

/**
 * JSON allows no raw control character, so a raw NUL makes the body malformed; when it sits
 * inside a string, the refusal names that string's element rather than a character position.
 */
function locateRawNul(text: string): void {
  let escaped: unknown;
  try {
    escaped = parseJson(text.replaceAll('\0', '\\u0000'));
  } catch {
    return;
  }
  assertStorableJson('\\u0000', escaped);
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
  const pairs = [...new URLSearchParams(text)];
  assertStorableForm(pairs);
  const body = Object.fromEntries(pairs) as Record<string, string>;
  Object.defineProperty(body, FORM_PAIRS, { value: pairs, enumerable: false });
  return body;
}

/** The pairs of a body parsed by {@link parseFormBody}; undefined for any other body. */
export function formPairs(body: unknown): [string, string][] | undefined {
  if (!body || typeof body !== 'object') return undefined;
  return (body as { [FORM_PAIRS]?: [string, string][] })[FORM_PAIRS];
}
