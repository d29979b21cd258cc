import sjson from 'secure-json-parse';
import { badRequest, OperationOutcomeError } from '@hearth/core';
import { keepDecimals, scanJson } from '../storage/decimal-json.js';
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
  // One scan checks the depth and finds the numbers whose written form JSON.parse loses (1.0, 1.50):
  // they are kept through to the stored text (storage/decimal-json.ts).
  const scan = scanJson(text, maxDepth);
  if (scan.tooDeep) {
    throw new OperationOutcomeError(badRequest(`JSON is nested deeper than ${maxDepth} levels`));
  }
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    if (text.includes('\0')) {
      locateRawNul(text);
    }
    throw new OperationOutcomeError(badRequest(`Malformed JSON: ${(err as Error).message}`), err);
  }
  keepDecimals(value, scan.loose);
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
