import type { OperationResult } from './types.js';

export const FHIR_JSON = 'application/fhir+json; charset=utf-8';

/** A FHIR resource (or other JSON) as the answer, 200 unless told. */
export function jsonResult(json: unknown, status = 200, headers?: Record<string, string>): OperationResult {
  return headers ? { status, headers, json } : { status, json };
}
