import { badRequest, fail } from '@hearth/core';
import type { RowRef } from './conditions.js';
import type { QueryContext } from './context.js';

/** `_filter` (hl7.org/fhir/R4/search_filter.html). */
export function compileFhirFilter(_ctx: QueryContext, _row: RowRef, _text: string): string {
  fail(badRequest('_filter is not supported yet', '_filter'));
}
