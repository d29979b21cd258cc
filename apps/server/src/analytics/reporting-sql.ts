/**
 * The SQL side of materialised views: names of the reporting schema, its read-only role and the
 * view tables; column types from the view's declared types; multi-row inserts. Identifiers are
 * derived from ids and checked names only, and always quoted; values are always parameters.
 */
import type { Queryable } from '../platform/postgres.js';
import type { Row, ViewColumn } from './view.js';

/** The project's reporting schema: `reporting_` and the project id's hex digits. */
export function reportingSchema(projectId: string): string {
  return `reporting_${projectId.replace(/[^0-9a-f]/gi, '').toLowerCase()}`;
}

/** The read-only role of a reporting schema (NOLOGIN: grant it to a login role; docs/analytics.md). */
export function readerRole(schema: string): string {
  return `${schema}_reader`;
}

/** The table of a view: its name when it is a plain SQL name, else `view_` and its id. */
export function viewTable(name: string | undefined, id: string): string {
  if (name && /^[A-Za-z][A-Za-z0-9_]{0,55}$/.test(name)) return name.toLowerCase();
  return `view_${id.replace(/[^A-Za-z0-9_]/g, '_').toLowerCase()}`.slice(0, 63);
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The PostgreSQL type of a view column (FHIR dates may be partial, so they stay text). */
export function sqlType(column: ViewColumn): string {
  if (column.collection) return 'jsonb';
  switch (column.type) {
    case 'boolean':
      return 'boolean';
    case 'integer':
    case 'positiveInt':
    case 'unsignedInt':
      return 'integer';
    case 'integer64':
      return 'bigint';
    case 'decimal':
      return 'numeric';
    default:
      return 'text';
  }
}

/** Bookkeeping columns beside the view's own: which resource (and version) a row comes from. */
export const RESOURCE_ID = '_resource_id';
export const RESOURCE_VERSION = '_resource_version';

export function createTableSql(schema: string, table: string, columns: ViewColumn[]): string {
  const defs = [
    `${quoteIdent(RESOURCE_ID)} text NOT NULL`,
    `${quoteIdent(RESOURCE_VERSION)} integer NOT NULL`,
    ...columns.map((c) => `${quoteIdent(c.name)} ${sqlType(c)}`),
  ];
  return `CREATE TABLE ${quoteIdent(schema)}.${quoteIdent(table)} (${defs.join(', ')})`;
}

function sqlValue(column: ViewColumn, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const type = sqlType(column);
  if (type === 'jsonb') return JSON.stringify(value);
  if (type === 'text' && typeof value === 'object') return JSON.stringify(value);
  if (type === 'text') return String(value);
  if (type === 'boolean') return typeof value === 'boolean' ? value : null;
  return typeof value === 'number' || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) ? value : null;
}

/** Rows of one or more resources, inserted by multi-row statements (bounded by PostgreSQL's 65,535 parameters). */
export async function insertRows(
  db: Queryable,
  schema: string,
  table: string,
  columns: ViewColumn[],
  rows: { resourceId: string; version: number; row: Row }[],
): Promise<void> {
  const width = columns.length + 2;
  const perStatement = Math.max(1, Math.floor(60_000 / width));
  const names = [RESOURCE_ID, RESOURCE_VERSION, ...columns.map((c) => c.name)].map(quoteIdent).join(', ');
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const values: unknown[] = [];
    const tuples = chunk.map(({ resourceId, version, row }) => {
      const base = values.length;
      values.push(resourceId, version, ...columns.map((c) => sqlValue(c, row[c.name])));
      return `(${Array.from({ length: width }, (_, i) => `$${base + i + 1}`).join(', ')})`;
    });
    await db.query(
      `INSERT INTO ${quoteIdent(schema)}.${quoteIdent(table)} (${names}) VALUES ${tuples.join(', ')}`,
      values,
    );
  }
}
