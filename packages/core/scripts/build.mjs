/**
 * Build of @hearth/core: an ES module (dist/esm) and a CommonJS module (dist/cjs), each one
 * bundled file with npm dependencies left external, and type declarations for both. The same ESM
 * file is the browser entry: the sources import nothing from Node (see browser.test.ts).
 *
 *   node packages/core/scripts/build.mjs      (after @hearth/fhir-types is built)
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(pkg, 'dist');
const started = Date.now();
rmSync(dist, { recursive: true, force: true });

const common = {
  entryPoints: [join(pkg, 'src', 'index.ts')],
  bundle: true,
  packages: 'external',
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  logLevel: 'warning',
};
await build({ ...common, format: 'esm', outfile: join(dist, 'esm', 'index.js') });
await build({ ...common, format: 'cjs', outfile: join(dist, 'cjs', 'index.js') });

const tsc = join(pkg, '..', '..', 'node_modules', '.bin', 'tsc');
execFileSync(tsc, ['-p', join(pkg, 'tsconfig.build.json')], { stdio: 'inherit' });
// The CommonJS half: its own package type, and the declarations beside it.
writeFileSync(join(dist, 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
cpSync(join(dist, 'types'), join(dist, 'cjs'), { recursive: true });
mkdirSync(join(dist, 'esm'), { recursive: true });
console.log(`@hearth/core: dist/esm, dist/cjs, dist/types in ${Date.now() - started} ms`);
