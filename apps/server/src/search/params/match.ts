import type { Filter, Operator } from '@hearth/core';
import type { Kind } from '../index/rows.js';
import type { QueryContext, ValueItem } from '../query/context.js';
import type { ParamDef } from '../registry/params.js';

/**
 * What a filter asks of a resource's index rows: some row of `kind` with parameter `code`
 * meets `predicate` (written over the row alias), or, with `negate`, no such row does.
 */
export interface RowMatch {
  kind: Kind;
  code: string;
  predicate: string;
  negate?: boolean;
}

/** The query half of one parameter kind. */
export interface KindQuery {
  (ctx: QueryContext, x: string, items: ValueItem[], filter: Filter, param: ParamDef, modifier?: Operator): RowMatch;
}

/** ORs predicates, parenthesised. */
export function anyOf(predicates: string[]): string {
  if (predicates.length === 0) return 'false';
  return predicates.length === 1 ? predicates[0] : `(${predicates.map((p) => `(${p})`).join(' OR ')})`;
}
