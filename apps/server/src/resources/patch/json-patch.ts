// JSON Patch (RFC 6902) on FHIR resources: hl7.org/fhir/R4/http.html#patch
import jsonpatch, { type Operation } from 'fast-json-patch';
import { badRequest, fail, unprocessable } from '@hearth/core';
import { copyKeepingDecimals } from '../../storage/decimal-json.js';

/** Errors of the patch document itself (400); the rest are patches that cannot apply to this resource (422). */
const MALFORMED = new Set([
  'SEQUENCE_NOT_AN_ARRAY',
  'OPERATION_NOT_AN_OBJECT',
  'OPERATION_OP_INVALID',
  'OPERATION_PATH_INVALID',
  'OPERATION_FROM_REQUIRED',
  'OPERATION_VALUE_REQUIRED',
  'OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED',
]);

const FORBIDDEN_SEGMENT = /(^|\/)(__proto__|constructor|prototype)(\/|$)/;

/** Applies a JSON Patch document to a copy of `doc`; the input is never modified. */
export function applyJsonPatch<T extends object>(doc: T, patch: unknown): T {
  if (!Array.isArray(patch)) {
    fail(badRequest('A JSON Patch body must be a JSON array of operations'));
  }
  patch.forEach((op: unknown, i) => {
    if (typeof op !== 'object' || op === null || Array.isArray(op)) {
      fail(badRequest(`JSON Patch operation ${i} must be an object`, `[${i}]`));
    }
    const { path, from } = op as { path?: unknown; from?: unknown };
    for (const [name, value] of [
      ['path', path],
      ['from', from],
    ] as const) {
      if (value !== undefined && (typeof value !== 'string' || FORBIDDEN_SEGMENT.test(value))) {
        fail(badRequest(`JSON Patch operation ${i} has an invalid ${name}`, `[${i}].${name}`));
      }
    }
  });
  const ops = patch as Operation[];
  try {
    // Patches our own copy (the library's would be a JSON round trip, dropping decimals' written form).
    return jsonpatch.applyPatch(copyKeepingDecimals(doc), ops, true, true, true).newDocument;
  } catch (err) {
    const e = err as { name?: string; message?: string; index?: number };
    const where = e.index !== undefined ? `[${e.index}]` : undefined;
    const text = `JSON Patch ${where ? `operation ${e.index} ` : ''}failed: ${firstLine(e.message)}`;
    if (e.name && MALFORMED.has(e.name)) {
      fail(badRequest(text, where));
    }
    if (e.name) {
      fail(unprocessable(text, where));
    }
    throw err;
  }
}

function firstLine(message: string | undefined): string {
  return (message ?? 'invalid patch').split('\n')[0];
}
