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
