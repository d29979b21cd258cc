/**
 * Build of @hearth/fhir-types: declarations only (dist/*.d.ts) and an empty module, since the
 * package holds nothing but types. The same declarations are copied under dist/cjs with a
 * CommonJS package type, so that a CommonJS consumer (TypeScript's node16 resolution, reached
 * through @hearth/core's `require` declarations) reads them as CommonJS rather than as an ES
 * module it may not import.
 *
 *   node packages/fhir-types/scripts/build.mjs
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(pkg, 'dist');
const started = Date.now();
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
const tsc = join(pkg, '..', '..', 'node_modules', '.bin', 'tsc');
execFileSync(tsc, ['-p', join(pkg, 'tsconfig.build.json')], { stdio: 'inherit' });
const cjs = join(dist, 'cjs');
mkdirSync(cjs);
for (const file of readdirSync(dist).filter((name) => name.endsWith('.d.ts'))) {
  copyFileSync(join(dist, file), join(cjs, file));
}
writeFileSync(join(dist, 'index.js'), 'export {};\n');
writeFileSync(join(cjs, 'index.js'), "'use strict';\n");
writeFileSync(join(cjs, 'package.json'), '{ "type": "commonjs" }\n');
console.log(`@hearth/fhir-types: dist/*.d.ts and dist/cjs in ${Date.now() - started} ms`);
