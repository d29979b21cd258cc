/**
 * Build step: writes dist/schema.json, the compact FHIR R4 + platform type schema, so that the
 * server reads a 1.5 MB file at start instead of building it from 47 MB of definitions.
 * The builder is TypeScript (src/schema/), so it is bundled with esbuild first.
 *
 *   node packages/definitions/scripts/build-schema.mjs
 */
import { build } from 'esbuild';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// A folder of this process's own: builds running at once (test files building the server bundle
// in parallel) must not remove each other's builder.
const work = join(dist, `.schema-build-${process.pid}`);
mkdirSync(work, { recursive: true });
const bundle = join(work, 'builder.mjs');
await build({
  entryPoints: [join(root, 'src', 'schema', 'load.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  outfile: bundle,
  packages: 'external',
  logLevel: 'warning',
});
const started = performance.now();
const { buildSchemaFromFiles } = await import(pathToFileURL(bundle).href);
const schema = buildSchemaFromFiles();
const json = JSON.stringify(schema);
// Written whole, then renamed: a process reading it meanwhile sees the old file or the new one.
writeFileSync(join(work, 'schema.json'), json);
renameSync(join(work, 'schema.json'), join(dist, 'schema.json'));
rmSync(work, { recursive: true, force: true });
console.log(
  `schema.json: ${Object.keys(schema.types).length} types, ${Object.keys(schema.valueSets).length} value sets, ` +
    `${(json.length / 1e6).toFixed(2)} MB, built in ${Math.round(performance.now() - started)} ms`,
);
