import type { ParamDef } from '../registry/params.js';

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
   * where a reference parameter points ('@n', index/reference-index.ts), indexed as resources of their own.
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

/** Context of one resource's extraction. */
export interface ExtractContext {
  resource: Record<string, unknown>;
  /** The server's FHIR base ('https://host/fhir/R4/'): absolute references to it are local. */
  fhirBase?: string;
  /** The parameters of another type (for contained resources). */
  paramsOf?: (resourceType: string) => Iterable<ParamDef>;
}
