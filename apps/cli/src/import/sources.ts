/**
 * What `hearth import` reads: NDJSON files (one resource per line, as bulk export writes them,
 * hl7.org/fhir/uv/bulkdata), Bundle files, single resources and arrays of resources, plain or
 * gzipped; directories are searched for them. Each file becomes numbered chunks of Bundle entries.
 */
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { gunzipSync, createGunzip } from 'node:zlib';
import type { Bundle, BundleEntry, Resource } from '@hearth/core';
import { CliError } from '../output.js';

export type ImportMode = 'transaction' | 'batch';

/** One thing to import: a Bundle entry, or why its line could not be read. */
export interface ImportItem {
  /** Where it is, for messages: 'line 12' or 'entry 3'. */
  where: string;
  entry?: BundleEntry;
  /** Set when the item cannot be sent (not JSON, not a resource). */
  invalid?: string;
}

export interface Chunk {
  index: number;
  /** The Bundle type to send. */
  type: ImportMode;
  items: ImportItem[];
}

export interface ImportFile {
  path: string;
  /** Changes when the file does: a different file starts its import over. */
  fingerprint: string;
  format: 'ndjson' | 'json';
  /** Resources (or entries) in the file. */
  count: number;
  chunkCount: number;
  /** The chunks in order; those `needed` says no to are not parsed (their items carry only `where`). */
  chunks(needed?: (index: number) => boolean): AsyncGenerator<Chunk>;
}

const IMPORTABLE = /\.(ndjson|jsonl|json)(\.gz)?$/i;
const NDJSON = /\.(ndjson|jsonl)(\.gz)?$/i;

/** The files named on the command line, directories searched (sorted, so that runs agree). */
export function findFiles(args: string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (entry.isFile() && IMPORTABLE.test(entry.name)) {
        files.push(path);
      }
    }
  };
  for (const arg of args) {
    const path = resolve(arg);
    if (!existsSync(path)) {
      throw new CliError(`No such file or directory: ${arg}`);
    }
    if (statSync(path).isDirectory()) {
      walk(path);
    } else {
      files.push(path);
    }
  }
  if (files.length === 0) {
    throw new CliError(`No .ndjson, .jsonl or .json files in ${args.join(', ')}`);
  }
  return [...new Set(files)];
}

/** A resource as a Bundle entry: PUT Type/id when it has an id (ids kept, reruns harmless), else POST Type. */
export function resourceEntry(resource: Resource, fullUrl?: string): BundleEntry {
  const request = resource.id
    ? { method: 'PUT' as const, url: `${resource.resourceType}/${resource.id}` }
    : { method: 'POST' as const, url: resource.resourceType };
  return { ...(fullUrl ? { fullUrl } : {}), resource, request };
}

function isResource(value: unknown): value is Resource {
  return typeof value === 'object' && value !== null && typeof (value as Resource).resourceType === 'string';
}

/** An item from one NDJSON line. */
export function lineItem(line: string, lineNumber: number): ImportItem {
  const where = `line ${lineNumber}`;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { where, invalid: `not valid JSON: ${(err as Error).message}` };
  }
  if (!isResource(value)) {
    return { where, invalid: 'not a FHIR resource (no resourceType)' };
  }
  return { where, entry: resourceEntry(value) };
}

function chunked(items: ImportItem[], size: number, type: ImportMode): Chunk[] {
  const chunks: Chunk[] = [];
  for (let i = 0; i * size < items.length; i++) {
    chunks.push({ index: i, type, items: items.slice(i * size, (i + 1) * size) });
  }
  return chunks;
}

/**
 * The chunks of a JSON file. A transaction Bundle is sent whole, as written; so is a Bundle whose
 * entries refer to each other by 'urn:' fullUrls (cutting it would break the references). A batch
 * Bundle's entries keep their requests; other Bundles' resources, arrays and single resources
 * become PUT/POST entries.
 */
export function jsonChunks(value: unknown, size: number, mode: ImportMode, name: string): Chunk[] {
  const entryItems = (entries: BundleEntry[]) => entries.map((entry, i) => ({ where: `entry ${i}`, entry }));
  if (isResource(value) && value.resourceType === 'Bundle') {
    const bundle = value as unknown as Bundle;
    const entries = (bundle.entry ?? []).filter((e) => e.resource || e.request);
    if (bundle.type === 'transaction') {
      return entries.length ? [{ index: 0, type: 'transaction', items: entryItems(entries) }] : [];
    }
    if (bundle.type === 'batch') {
      return chunked(entryItems(entries), size, mode);
    }
    const resources = entries.filter((e) => e.resource && e.search?.mode !== 'outcome');
    if (resources.some((e) => e.fullUrl?.startsWith('urn:'))) {
      const items = resources.map((e, i) => ({
        where: `entry ${i}`,
        entry: resourceEntry(e.resource as Resource, e.fullUrl),
      }));
      return [{ index: 0, type: 'transaction', items }];
    }
    return chunked(
      resources.map((e, i) => ({ where: `entry ${i}`, entry: resourceEntry(e.resource as Resource) })),
      size,
      mode,
    );
  }
  if (Array.isArray(value)) {
    const items = value.map((v, i) =>
      isResource(v)
        ? { where: `item ${i}`, entry: resourceEntry(v) }
        : { where: `item ${i}`, invalid: 'not a FHIR resource' },
    );
    return chunked(items, size, mode);
  }
  if (isResource(value)) {
    return [{ index: 0, type: mode, items: [{ where: 'the resource', entry: resourceEntry(value) }] }];
  }
  throw new CliError(`${name} is neither a FHIR resource, a Bundle, nor an array of resources`);
}

function lines(path: string): AsyncIterable<string> {
  const stream = createReadStream(path);
  const input = path.toLowerCase().endsWith('.gz') ? stream.pipe(createGunzip()) : stream;
  return createInterface({ input, crlfDelay: Infinity });
}

/** Counts the non-empty lines of an NDJSON file (streamed). */
async function countLines(path: string): Promise<number> {
  let count = 0;
  for await (const line of lines(path)) {
    if (line.trim()) {
      count++;
    }
  }
  return count;
}

function readJson(path: string): unknown {
  const bytes = readFileSync(path);
  const text = (path.toLowerCase().endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Opens a file for import: its format, size in resources and chunks. */
export async function openImportFile(path: string, size: number, mode: ImportMode): Promise<ImportFile> {
  const stat = statSync(path);
  const fingerprint = `${stat.size}:${Math.round(stat.mtimeMs)}`;
  // A .json file that is not one JSON value is read as NDJSON (some exports name them so).
  const json = NDJSON.test(path) ? undefined : readJson(path);
  if (json !== undefined) {
    const chunks = jsonChunks(json, size, mode, basename(path));
    const count = chunks.reduce((n, c) => n + c.items.length, 0);
    return {
      path,
      fingerprint,
      format: 'json',
      count,
      chunkCount: chunks.length,
      async *chunks() {
        yield* chunks;
      },
    };
  }
  const count = await countLines(path);
  return {
    path,
    fingerprint,
    format: 'ndjson',
    count,
    chunkCount: Math.ceil(count / size),
    async *chunks(needed = () => true) {
      let raw: [string, number][] = [];
      let index = 0;
      let lineNumber = 0;
      const chunk = (): Chunk => ({
        index,
        type: mode,
        items: needed(index) ? raw.map(([line, n]) => lineItem(line, n)) : raw.map(([, n]) => ({ where: `line ${n}` })),
      });
      for await (const line of lines(path)) {
        lineNumber++;
        if (!line.trim()) {
          continue;
        }
        raw.push([line, lineNumber]);
        if (raw.length === size) {
          yield chunk();
          index++;
          raw = [];
        }
      }
      if (raw.length) {
        yield chunk();
      }
    },
  };
}
