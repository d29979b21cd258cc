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
  for (const row of rows) text += copyLine(row);
  return text;
}

function copyLine(row: readonly CopyValue[]): string {
  return `${row.map(copyField).join('\t')}\n`;
}

/**
 * Bytes sent per piece. The pieces are filled field by field: building a batch's text as one
 * string and then encoding it made three copies of every resource's JSON in fresh memory, which
 * cost more than the rest of the COPY on the client side.
 */
const CHUNK_BYTES = 256 * 1024;

/** The COPY text of `rows`, encoded a piece at a time, as the connection takes them. */
function* copyChunks(rows: readonly (readonly CopyValue[])[]): Generator<Buffer> {
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let at = 0;
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const text = copyField(row[i]);
      // A field is at most 3 bytes per UTF-16 unit; the exact length is asked only when that may not fit.
      const needed = at + 3 * text.length + 2 <= CHUNK_BYTES ? 0 : Buffer.byteLength(text) + 2;
      if (needed > 0 && at + needed > CHUNK_BYTES) {
        if (at > 0) yield chunk.subarray(0, at);
        chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, needed));
        at = 0;
      }
      at += chunk.write(text, at);
      chunk[at++] = i === row.length - 1 ? 0x0a : 0x09; // newline ends the row, tab the field
    }
  }
  if (at > 0) yield chunk.subarray(0, at);
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
  await pipeline(Readable.from(copyChunks(rows), { objectMode: false }), stream);
}
