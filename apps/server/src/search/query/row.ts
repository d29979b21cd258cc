/** A resource row in SQL: its alias, and its type when fixed (else the row's own resource_type). */
export interface RowRef {
  alias: string;
  resourceType?: string;
  /** The id column under `alias`: 'id' on a resource row, 'resource_id' on an index row. */
  idColumn?: 'id' | 'resource_id';
}

/** The resource id of a row reference, as SQL. */
export function rowId(row: RowRef): string {
  return `${row.alias}.${row.idColumn ?? 'id'}`;
}
