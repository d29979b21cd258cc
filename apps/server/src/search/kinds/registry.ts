import type { SearchParamType } from '@hearth/core';
import { compositeKind } from './composite.js';
import { dateKind } from './date.js';
import type { SearchParamKind } from './kind.js';
import { numberKind } from './number.js';
import { quantityKind } from './quantity.js';
import { referenceKind } from './reference.js';
import { specialKind } from './special.js';
import { stringKind } from './string.js';
import { tokenKind } from './token.js';
import { uriKind } from './uri.js';

/**
 * Every search parameter type's kind: what indexing (index/extract.ts), filters
 * (query/conditions.ts) and _sort (query/sort.ts) dispatch on.
 */
export const SEARCH_KINDS: Readonly<Record<SearchParamType, SearchParamKind>> = {
  token: tokenKind,
  string: stringKind,
  date: dateKind,
  number: numberKind,
  quantity: quantityKind,
  reference: referenceKind,
  uri: uriKind,
  // A composite's parts are of the kinds with a table of their own.
  composite: compositeKind((type) => (kindOf(type)?.table ? kindOf(type) : undefined)),
  special: specialKind,
};

/** The kind of a parameter type; undefined for a type no kind implements (a malformed SearchParameter's). */
export function kindOf(type: SearchParamType): SearchParamKind | undefined {
  return Object.hasOwn(SEARCH_KINDS, type) ? SEARCH_KINDS[type] : undefined;
}
