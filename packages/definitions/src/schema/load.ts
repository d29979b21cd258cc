/**
 * The schema in Node: read from the prebuilt dist/schema.json (written at build time by
 * scripts/build-schema.mjs) when it exists and matches the current inputs, otherwise built in
 * memory from the R4 files (about a second) and kept for the life of the process. A schema built
 * in memory is also written to dist/schema.json when that folder is writable, so that the next
 * process starts fast even where the build step did not run.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { r4DefinitionsDir } from '../files.js';
import { buildSchema, schemaInputs } from './build.js';
import type { FhirSchema } from './types.js';

const require = createRequire(import.meta.url);

let cached: FhirSchema | undefined;

/** Where the build step writes the prebuilt schema. */
export function prebuiltSchemaPath(): string {
  return join(dirname(require.resolve('@hearth/definitions/package.json')), 'dist', 'schema.json');
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Identifies the inputs: the R4 data's package version plus everything defined in this repo. */
export function schemaFingerprint(): string {
  const medplum = readJson<{ version: string }>(join(r4DefinitionsDir(), '..', '..', '..', 'package.json'));
  return createHash('sha256')
    .update(JSON.stringify([medplum.version, ...schemaInputs()]))
    .digest('hex')
    .slice(0, 16);
}

/** Builds the schema from the R4 files, without keeping the large parsed files around. */
export function buildSchemaFromFiles(): FhirSchema {
  const dir = r4DefinitionsDir();
  return buildSchema({
    profilesTypes: readJson(join(dir, 'profiles-types.json')),
    profilesResources: readJson(join(dir, 'profiles-resources.json')),
    valueSets: readJson(join(dir, 'valuesets.json')),
    extensionDefinitions: readJson(join(dir, 'extension-definitions.json')),
    profilesOthers: readJson(join(dir, 'profiles-others.json')),
    fingerprint: schemaFingerprint(),
  });
}

/** The prebuilt schema, if present and built from the current inputs. */
export function loadPrebuiltSchema(path = prebuiltSchemaPath()): FhirSchema | undefined {
  if (!existsSync(path)) {
    return undefined;
  }
  let schema: FhirSchema;
  try {
    schema = readJson<FhirSchema>(path);
  } catch {
    return undefined; // unreadable or truncated: rebuilt
  }
  return schema.fingerprint === schemaFingerprint() ? schema : undefined;
}

/** Writes the schema to `path` atomically (rename), so that a concurrent reader never sees half a file. */
export function writePrebuiltSchema(schema: FhirSchema, path = prebuiltSchemaPath()): boolean {
  try {
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(schema));
    renameSync(tmp, path);
    return true;
  } catch {
    return false; // a read-only install: every process builds its own
  }
}

function buildAndCache(): FhirSchema {
  const schema = buildSchemaFromFiles();
  writePrebuiltSchema(schema);
  return schema;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) {
      deepFreeze(child);
    }
  }
  return value;
}

/** The FHIR R4 + platform type schema, loaded once per process; frozen, since every caller shares it. */
export function getSchema(): FhirSchema {
  cached ??= deepFreeze(loadPrebuiltSchema() ?? buildAndCache());
  return cached;
}
