/**
 * The output formats of ViewDefinition/$run (build.fhir.org/ig/FHIR/sql-on-fhir-v2/OperationDefinition-ViewDefinitionRun.html):
 * CSV (RFC 4180, a header row unless `header=false`), NDJSON (one JSON object a row), JSON (one
 * array), and Parquet (hyparquet-writer; typed columns from the view's declared types). Text
 * formats are written row by row; Parquet needs every row before its footer.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { Row, ViewColumn } from './view.js';

export type RunFormat = 'csv' | 'ndjson' | 'json' | 'parquet';

/** `_format` values and Accept media types, to the format they ask for. */
const FORMAT_NAMES: Record<string, RunFormat> = {
  csv: 'csv',
  'text/csv': 'csv',
  ndjson: 'ndjson',
  'application/ndjson': 'ndjson',
  'application/x-ndjson': 'ndjson',
  'application/fhir+ndjson': 'ndjson',
  json: 'json',
  'application/json': 'json',
  parquet: 'parquet',
  'application/vnd.apache.parquet': 'parquet',
  'application/parquet': 'parquet',
};

export const CONTENT_TYPES: Record<RunFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  json: 'application/json; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};

/** The format `_format` names (any case), or undefined when it names none. */
export function runFormat(name: string): RunFormat | undefined {
  return FORMAT_NAMES[name.trim().toLowerCase()];
}

/** A value as text: collections and complex values as JSON, null as nothing. */
function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function csvField(value: unknown): string {
  const s = text(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Writes rows one chunk at a time; `end` gives what closes the output. */
export interface RowWriter {
  start(): string;
  row(row: Row, first: boolean): string;
  end(): string;
}

export function textWriter(format: Exclude<RunFormat, 'parquet'>, columns: ViewColumn[], header = true): RowWriter {
  const names = columns.map((c) => c.name);
  switch (format) {
    case 'csv':
      return {
        start: () => (header ? `${names.map(csvField).join(',')}\r\n` : ''),
        row: (row) => `${names.map((n) => csvField(row[n])).join(',')}\r\n`,
        end: () => '',
      };
    case 'ndjson':
      return { start: () => '', row: (row) => `${JSON.stringify(row)}\n`, end: () => '' };
    case 'json':
      return {
        start: () => '[',
        row: (row, first) => `${first ? '' : ','}${JSON.stringify(row)}`,
        end: () => ']',
      };
  }
}

type ParquetType = 'BOOLEAN' | 'INT32' | 'INT64' | 'DOUBLE' | 'STRING' | 'JSON';

/** The Parquet type of a view column: numbers and booleans typed, collections as JSON, the rest as text. */
function parquetType(column: ViewColumn): ParquetType {
  if (column.collection) return 'JSON';
  switch (column.type) {
    case 'boolean':
      return 'BOOLEAN';
    case 'integer':
    case 'positiveInt':
    case 'unsignedInt':
      return 'INT32';
    case 'integer64':
      return 'INT64';
    case 'decimal':
      return 'DOUBLE';
    default:
      return 'STRING';
  }
}

function parquetValue(type: ParquetType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'BOOLEAN':
      return typeof value === 'boolean' ? value : null;
    case 'INT32':
    case 'DOUBLE':
      return typeof value === 'number' ? value : null;
    case 'INT64':
      return typeof value === 'number' || typeof value === 'string' ? BigInt(value) : null;
    case 'JSON':
      return value;
    case 'STRING':
      return text(value);
  }
}

/** The rows as one Parquet file. */
export function parquetFile(columns: ViewColumn[], rows: Row[]): Buffer {
  const columnData = columns.map((column) => {
    const type = parquetType(column);
    return { name: column.name, type, data: rows.map((row) => parquetValue(type, row[column.name])) };
  });
  return Buffer.from(parquetWriteBuffer({ columnData } as Parameters<typeof parquetWriteBuffer>[0]));
}
