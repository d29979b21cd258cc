/**
 * The search request model shared by the server and the SDK (hl7.org/fhir/R4/search.html).
 * Names follow the spec's contract types: SearchRequest, Filter, SortRule, Operator.
 */

/**
 * How a filter compares: a value prefix (eq, ne, gt, lt, ge, le, sa, eb, ap;
 * hl7.org/fhir/R4/search.html#prefix) or a modifier (:contains, :exact, ...;
 * hl7.org/fhir/R4/search.html#modifiers).
 */
export enum Operator {
  EQUALS = 'eq',
  NOT_EQUALS = 'ne',
  GREATER_THAN = 'gt',
  LESS_THAN = 'lt',
  GREATER_THAN_OR_EQUALS = 'ge',
  LESS_THAN_OR_EQUALS = 'le',
  STARTS_AFTER = 'sa',
  ENDS_BEFORE = 'eb',
  APPROXIMATELY = 'ap',
  // Modifiers
  CONTAINS = 'contains',
  EXACT = 'exact',
  TEXT = 'text',
  NOT = 'not',
  ABOVE = 'above',
  BELOW = 'below',
  IN = 'in',
  NOT_IN = 'not-in',
  OF_TYPE = 'of-type',
  MISSING = 'missing',
  IDENTIFIER = 'identifier',
  ITERATE = 'iterate',
}

/** The value prefixes of number, date and quantity parameters. */
export const PREFIX_OPERATORS: readonly Operator[] = [
  Operator.EQUALS,
  Operator.NOT_EQUALS,
  Operator.GREATER_THAN,
  Operator.LESS_THAN,
  Operator.GREATER_THAN_OR_EQUALS,
  Operator.LESS_THAN_OR_EQUALS,
  Operator.STARTS_AFTER,
  Operator.ENDS_BEFORE,
  Operator.APPROXIMATELY,
];

/** The modifiers written after a colon in a parameter name. */
export const MODIFIER_OPERATORS: readonly Operator[] = [
  Operator.CONTAINS,
  Operator.EXACT,
  Operator.TEXT,
  Operator.NOT,
  Operator.ABOVE,
  Operator.BELOW,
  Operator.IN,
  Operator.NOT_IN,
  Operator.OF_TYPE,
  Operator.MISSING,
  Operator.IDENTIFIER,
];

/**
 * One search condition. `code` is the parameter name as written, including any chain and type
 * modifier ('subject:Patient.name', '_has:Observation:subject:code'); `operator` is the modifier
 * or the value prefix; `value` is the raw value, where commas separate alternatives (OR) and
 * `\,` `\$` `\|` `\\` are escapes.
 */
export interface Filter {
  code: string;
  operator: Operator;
  value: string;
}

/** One `_sort` key. */
export interface SortRule {
  code: string;
  descending?: boolean;
}

/** One `_include` or `_revinclude`: `resourceType:searchParam[:targetType]`, optionally `:iterate`. */
export interface IncludeTarget {
  resourceType: string;
  searchParam: string;
  targetType?: string;
  modifier?: 'iterate';
}

export type SearchTotal = 'none' | 'estimate' | 'accurate';
export type SearchSummary = 'true' | 'false' | 'text' | 'data' | 'count';

/** A whole search: what to find, in which order, how much of it, and what to bring along. */
export interface SearchRequest {
  /** The type searched; '' for a system-level search (then `types` may narrow it). */
  resourceType: string;
  filters?: Filter[];
  sortRules?: SortRule[];
  /** Page size (`_count`). */
  count?: number;
  /** Rows to skip (`_offset`). */
  offset?: number;
  /** Opaque keyset position of a page (`_cursor`), from a `next` link. */
  cursor?: string;
  include?: IncludeTarget[];
  revInclude?: IncludeTarget[];
  total?: SearchTotal;
  summary?: SearchSummary;
  /** Elements to return (`_elements`). */
  fields?: string[];
  /** Types of a system-level search (`_type`). */
  types?: string[];
  /** `_filter` expression (hl7.org/fhir/R4/search_filter.html). */
  filter?: string;
  format?: string;
  pretty?: boolean;
  /** A saved search's name (`_query`). */
  name?: string;
}
