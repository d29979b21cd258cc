/**
 * Reading the HL7 packages of ../shared/data/fhir-r4-spec in tests (optional data: callers skip
 * when the files are absent).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

export const SHARED_DATA = resolve(import.meta.dirname, '../../../../../shared/data');
export const SPEC_EXAMPLES = join(SHARED_DATA, 'fhir-r4-spec', 'hl7.fhir.r4.examples-4.0.1.tgz');
export const SPEC_CORE = join(SHARED_DATA, 'fhir-r4-spec', 'hl7.fhir.r4.core-4.0.1.tgz');

/** The files of a .tar buffer (ustar, with PAX long names), name -> content. */
export function* readTar(tar: Buffer): Generator<[string, Buffer]> {
  let offset = 0;
  let paxPath: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) {
      break;
    }
    const field = (start: number, length: number): string =>
      header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const name = paxPath ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    const body = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      paxPath = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1];
      continue;
    }
    paxPath = undefined;
    if (type === '0' || type === '') {
      yield [name, body];
    }
  }
}

/** The JSON resources of an npm-style FHIR package (.tgz), by file name. */
export function* packageResources(tgz: string): Generator<[string, Record<string, unknown>]> {
  for (const [path, content] of readTar(gunzipSync(readFileSync(tgz)))) {
    const file = path.slice(path.lastIndexOf('/') + 1);
    if (!file.endsWith('.json') || file === 'package.json' || file.startsWith('.')) {
      continue;
    }
    const resource = JSON.parse(content.toString('utf8')) as Record<string, unknown>;
    if (typeof resource.resourceType === 'string') {
      yield [file, resource];
    }
  }
}

/**
 * A pause for long synchronous loops over the spec's or Synthea's files: awaited between items, it
 * yields to the event loop every `everyMs` of work. A test worker that runs synchronously for a
 * minute on a busy machine cannot answer vitest in time ("Timeout calling onTaskUpdate"), which
 * fails the whole run even though every test passed.
 */
export function breather(everyMs = 200): () => Promise<void> | undefined {
  let last = performance.now();
  return () => {
    if (performance.now() - last < everyMs) {
      return undefined;
    }
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        last = performance.now();
        resolve();
      }),
    );
  };
}
