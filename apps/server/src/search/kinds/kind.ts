import type { Filter, Operator, SearchParamType } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { IndexContext } from '../index/context.js';
import type { Kind, RowSet } from '../index/rows.js';
import type { QueryContext, ValueItem } from '../query/context.js';
import type { RowRef } from '../query/row.js';
import type { ParamDef } from '../registry/params.js';

/**
 * One type of search parameter (hl7.org/fhir/R4/search.html#ptypes): how its values become
 * index rows, how a filter on it becomes SQL, how it sorts. Most kinds keep their values as
 * rows of their own table and a filter asks for some such row (`table`, `match`); composite and
 * special parameters write rows of other kinds and compile a condition of their own
 * (`condition`). Registered by type in `registry.ts`.
 */
export interface SearchParamKind {
  readonly type: SearchParamType;
  /** Its values take the prefixes eq, ne, gt... (hl7.org/fhir/R4/search.html#prefix). */
  readonly prefixed: boolean;
  /** The index table its rows go to; none for a kind that writes other kinds' rows. */
  readonly table?: Kind;
  /** Adds the index rows of one parameter's values. */
  index(values: TypedValue[], slot: IndexSlot, rows: RowSet, ctx: IndexContext): void;
  /** The rows a filter asks for; unsupported modifiers fail here (:missing is the caller's). */
  match?(ctx: QueryContext, input: MatchInput): RowMatch;
  /** For a kind without `match`: the whole condition on the resource row; undefined when ignored (lenient). */
  condition?(ctx: QueryContext, row: RowRef, param: ParamDef, filter: Filter): string | undefined;
  /** The rows `:missing` asks about, when they are not the parameter's own rows of `table`. */
  missing?(param: ParamDef): { kind: Kind; code: string };
  /** The column _sort orders by, smallest value first (asc) or largest first (desc); undefined: not sortable. */
  readonly sort?: SortColumn;
}

/** Where a parameter's values are indexed: the code their rows carry and the composite group (0 otherwise). */
export interface IndexSlot {
  param: ParamDef;
  code: string;
  grp: number;
}

/** A filter as a kind's `match` reads it: its OR alternatives and modifiers. */
export interface MatchInput {
  /** The row alias the predicate is written over. */
  x: string;
  items: ValueItem[];
  filter: Filter;
  param: ParamDef;
  modifier?: Operator;
  /** A reference's `:Type` (the other kinds never see one). */
  typeModifier?: string;
}

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

/** A sort key read from a kind's row under alias `x`: for the smallest value first (asc), the largest (desc). */
export interface SortColumn {
  asc(x: string): string;
  desc(x: string): string;
  type: 'text' | 'timestamptz' | 'numeric';
}

/** ORs predicates, parenthesised. */
export function anyOf(predicates: string[]): string {
  if (predicates.length === 0) return 'false';
  return predicates.length === 1 ? predicates[0] : `(${predicates.map((p) => `(${p})`).join(' OR ')})`;
}
