/**
 * Build of @hearth/fhir-types: declarations only (dist/*.d.ts) and an empty module, since the
 * package holds nothing but types.
 *
 *   node packages/fhir-types/scripts/build.mjs
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(pkg, 'dist');
const started = Date.now();
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
const tsc = join(pkg, '..', '..', 'node_modules', '.bin', 'tsc');
execFileSync(tsc, ['-p', join(pkg, 'tsconfig.build.json')], { stdio: 'inherit' });
writeFileSync(join(dist, 'index.js'), 'export {};\n');
console.log(`@hearth/fhir-types: dist/*.d.ts in ${Date.now() - started} ms`);
