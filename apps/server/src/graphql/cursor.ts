import { badRequest, fail } from '@hearth/core';

/**
 * Connection cursors (hl7.org/fhir/R4/graphql.html#searching): opaque to clients, they carry the
 * search of the page they point at (its query string, with the search's own keyset cursor or
 * offset), where that page starts, and the connection's `fhirpath` condition if it has one.
 * Access is never in a cursor: it is checked on every read.
 */
export function encodeCursor(resourceType: string, params: URLSearchParams, offset: number, fhirpath?: string): string {
  const parts: unknown[] = [resourceType, params.toString(), offset];
  if (fhirpath) {
    parts.push(fhirpath);
  }
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

export function decodeCursor(
  text: string,
  resourceType: string,
): { params: URLSearchParams; offset: number; fhirpath?: string } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (
    !Array.isArray(decoded) ||
    (decoded.length !== 3 && !(decoded.length === 4 && typeof decoded[3] === 'string')) ||
    typeof decoded[1] !== 'string' ||
    typeof decoded[2] !== 'number' ||
    !Number.isInteger(decoded[2]) ||
    decoded[2] < 0
  ) {
    fail(badRequest('_cursor is not a cursor of this server', '_cursor'));
  }
  if (decoded[0] !== resourceType) {
    fail(badRequest(`_cursor belongs to a ${String(decoded[0])} connection, not ${resourceType}`, '_cursor'));
  }
  return { params: new URLSearchParams(decoded[1]), offset: decoded[2], fhirpath: decoded[3] as string | undefined };
}
