/** Request bodies from the command line: a file, '-' for stdin, or inline JSON. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { CliError } from './output.js';

export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks);
}

/** The bytes named by `source`: '-' reads stdin, an existing file is read, anything else is the text itself. */
export async function readSource(source: string): Promise<{ bytes: Buffer; filename?: string }> {
  if (source === '-') {
    return { bytes: await readStdin() };
  }
  if (existsSync(source) && statSync(source).isFile()) {
    return { bytes: readFileSync(source), filename: source };
  }
  const trimmed = source.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    return { bytes: Buffer.from(source) };
  }
  throw new CliError(`No such file: ${source} (give a file, '-' for stdin, or inline JSON)`);
}

/** Parses JSON input, saying where it came from when it is not JSON. */
export function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new CliError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

const CONTENT_TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.ndjson': 'application/fhir+ndjson',
  '.xml': 'application/xml',
  '.hl7': 'x-application/hl7-v2+er7',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.ts': 'text/typescript',
  '.mts': 'text/typescript',
  '.js': 'application/javascript',
  '.mjs': 'application/javascript',
  '.cjs': 'application/javascript',
};

/** A content type guessed from a file name; undefined when the extension says nothing. */
export function contentTypeOf(filename: string | undefined): string | undefined {
  return filename ? CONTENT_TYPES[extname(filename).toLowerCase()] : undefined;
}

/** True for media types whose bodies are JSON. */
export function isJsonType(contentType: string): boolean {
  const media = contentType.split(';')[0].trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

/** "Name: value" header arguments as a record. */
export function parseHeaders(values: string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values ?? []) {
    const colon = value.indexOf(':');
    if (colon <= 0) {
      throw new CliError(`Invalid header '${value}': expected 'Name: value'`);
    }
    headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim();
  }
  return headers;
}
