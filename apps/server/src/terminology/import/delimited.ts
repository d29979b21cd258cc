import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/**
 * Records of a delimited text stream, one array of fields each, read as the bytes arrive.
 * With `quoted` (CSV, RFC 4180) fields may be wrapped in double quotes, holding delimiters, line
 * breaks and doubled quotes; without (TSV as in SNOMED CT RF2) every line is one record.
 */
export async function* readDelimited(
  input: AsyncIterable<Buffer | string>,
  delimiter: string,
  quoted: boolean,
): AsyncGenerator<string[]> {
  let field = '';
  let record: string[] = [];
  let inQuotes = false;
  let pendingQuote = false; // saw a quote inside a quoted field: either "" or the closing quote
  let afterCr = false;
  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (afterCr) {
        afterCr = false;
        if (c === '\n') continue;
      }
      if (inQuotes) {
        if (pendingQuote) {
          pendingQuote = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          inQuotes = false; // the quote closed the field; fall through to handle c normally
        } else if (c === '"') {
          pendingQuote = true;
          continue;
        } else {
          field += c;
          continue;
        }
      }
      if (quoted && c === '"' && field === '') {
        inQuotes = true;
      } else if (c === delimiter) {
        record.push(field);
        field = '';
      } else if (c === '\n' || c === '\r') {
        afterCr = c === '\r';
        record.push(field);
        field = '';
        if (record.length > 1 || record[0] !== '') {
          yield record;
        }
        record = [];
      } else {
        field += c;
      }
    }
  }
  if (field !== '' || record.length > 0) {
    record.push(field);
    yield record;
  }
}

/** Non-empty lines of a stream, with their 1-based line numbers. */
export async function* readLines(input: Readable): AsyncGenerator<{ line: string; number: number }> {
  let number = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    number++;
    if (line.trim() !== '') {
      yield { line, number };
    }
  }
}
