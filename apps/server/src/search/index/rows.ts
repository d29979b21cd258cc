/** The lookup tables of the search index and the rows one resource contributes to them. */

export const KINDS = ['token', 'string', 'date', 'number', 'quantity', 'reference', 'uri'] as const;
export type Kind = (typeof KINDS)[number];

export interface TableSpec {
  table: string;
  /** Kind-specific columns, in the order of IndexRow.values, with their SQL array types. */
  columns: [name: string, arrayType: string][];
}

export const TABLES: Record<Kind, TableSpec> = {
  token: {
    table: 'search_token',
    columns: [
      ['system', 'text[]'],
      ['value', 'text[]'],
      ['text', 'text[]'],
      ['sort_first', 'timestamptz[]'],
      ['sort_last', 'timestamptz[]'],
    ],
  },
  string: {
    table: 'search_string',
    columns: [
      ['value', 'text[]'],
      ['raw', 'text[]'],
    ],
  },
  date: {
    table: 'search_date',
    columns: [
      ['low', 'timestamptz[]'],
      ['high', 'timestamptz[]'],
    ],
  },
  number: {
    table: 'search_number',
    columns: [
      ['low', 'numeric[]'],
      ['high', 'numeric[]'],
    ],
  },
  quantity: {
    table: 'search_quantity',
    columns: [
      ['system', 'text[]'],
      ['unit', 'text[]'],
      ['low', 'numeric[]'],
      ['high', 'numeric[]'],
      ['nunit', 'text[]'],
      ['nlow', 'numeric[]'],
      ['nhigh', 'numeric[]'],
    ],
  },
  reference: {
    table: 'search_reference',
    columns: [
      ['target_type', 'text[]'],
      ['target_id', 'text[]'],
      ['ref', 'text[]'],
    ],
  },
  uri: { table: 'search_uri', columns: [['value', 'text[]']] },
};

/**
 * The date parameter whose sort keys every plain token row of the resource carries (sort_first:
 * the start of its smallest value, sort_last: the start of its largest, as `_sort=date` and
 * `_sort=-date` order them), so that `code=X&_sort=-date` reads an index on (code, value,
 * sort_last) in order and stops at the page size (migration 102, query/token-sort.ts).
 */
export const TOKEN_SORT_DATE = 'date';

/** One value of one parameter of one resource. */
export interface IndexRow {
  code: string;
  /** Ties the parts of one composite value (0 otherwise). */
  grp: number;
  values: (string | null)[];
  /**
   * Keys that decide which row is the resource's smallest / largest for _sort; null for a row
   * that holds no sortable value (a CodeableConcept's text alone), never the sort row.
   */
  sortLow: number | string | null;
  sortHigh: number | string | null;
  isMin?: boolean;
  isMax?: boolean;
}

export type RowSet = Record<Kind, IndexRow[]> & {
  /**
   * Rows of contained resources that references point at ('#id'), and of resources held inline
   * where a reference parameter points ('@n', kinds/reference.ts), indexed as resources of their own.
   */
  contained?: { resourceType: string; id: string; rows: RowSet; source?: unknown }[];
};

export function emptyRowSet(): RowSet {
  return { token: [], string: [], date: [], number: [], quantity: [], reference: [], uri: [] };
}

/**
 * Marks, per parameter code, the row with the smallest sortLow and the one with the largest
 * sortHigh. Rows without a sort key are never marked: a resource whose rows of a code all lack
 * one has no sort row, and sorts with the resources that have no value (query/sort.ts).
 */
export function markExtremes(rows: IndexRow[]): void {
  if (rows.length === 0) {
    return;
  }
  const min = new Map<string, IndexRow>();
  const max = new Map<string, IndexRow>();
  for (const row of rows) {
    if (row.sortLow !== null) {
      const lo = min.get(row.code);
      if (!lo || row.sortLow < lo.sortLow!) min.set(row.code, row);
    }
    if (row.sortHigh !== null) {
      const hi = max.get(row.code);
      if (!hi || row.sortHigh > hi.sortHigh!) max.set(row.code, row);
    }
  }
  for (const row of rows) {
    row.isMin = min.get(row.code) === row;
    row.isMax = max.get(row.code) === row;
  }
}

/**
 * Copies the sort keys of the TOKEN_SORT_DATE parameter (after markExtremes) onto the resource's
 * plain token rows (grp 0): values[3] and values[4], NULL when the resource has no such date.
 */
export function stampTokenSortDates(rows: RowSet): void {
  let first: string | null = null;
  let last: string | null = null;
  for (const row of rows.date) {
    if (row.code !== TOKEN_SORT_DATE || row.grp !== 0) continue;
    if (row.isMin) first = row.values[0];
    if (row.isMax) last = row.values[0];
  }
  for (const row of rows.token) {
    row.values[3] = row.grp === 0 ? first : null;
    row.values[4] = row.grp === 0 ? last : null;
  }
}
