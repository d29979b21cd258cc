// Bulk inserts with PostgreSQL's COPY (text format): the cheapest way for the server to take many
// rows, without the parsing of a JSON or array parameter per row. Values are escaped here, so
// no input can end a field or a row early.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { PoolClient } from './postgres.js';

/** A field's value: text, a number, null (NULL), bytes (bytea) or a list of texts (text[]). */
export type CopyValue = string | number | null | Buffer | readonly string[];

const SPECIAL = /[\\\n\r\t]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Text escaped for a field of COPY's text format. */
function escapeText(text: string): string {
  return text.replace(SPECIAL, (c) => ESCAPES[c]);
}

/** An array literal ({"a","b"}) with each element quoted, so commas, braces and quotes stay inside it. */
function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}

/** One field of a row, as COPY's text format spells it. */
export function copyField(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  if (Buffer.isBuffer(value)) return `\\\\x${value.toString('hex')}`;
  if (Array.isArray(value)) return escapeText(arrayLiteral(value));
  return escapeText(value as string);
}

/** Rows as the text COPY reads: fields separated by tabs, rows ended by newlines. */
export function copyText(rows: readonly (readonly CopyValue[])[]): string {
  let text = '';
  for (const row of rows) text += `${row.map(copyField).join('\t')}\n`;
  return text;
}

/** Inserts `rows` into `table (columns)` with COPY, on the client's connection (inside its transaction, if any). */
export async function copyRows(
  client: PoolClient,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly CopyValue[])[],
): Promise<void> {
  if (rows.length === 0) return;
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  await pipeline(Readable.from([copyText(rows)]), stream);
}
