import type { OperationInput } from './types.js';

/** True when the request asks for an asynchronous answer (Prefer: respond-async, hl7.org/fhir/R4/async.html). */
export function prefersAsync(input: Pick<OperationInput, 'headers'>): boolean {
  return /(^|[,;\s])respond-async\b/i.test(input.headers.prefer ?? '');
}

/** The media type of the body, lower case and without parameters ('' without a Content-Type). */
export function mediaTypeOf(input: Pick<OperationInput, 'headers'>): string {
  return (input.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}
