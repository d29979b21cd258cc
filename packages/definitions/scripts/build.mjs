/**
 * Build of @hearth/definitions as a package a project outside this repository can install: the
 * library (dist/index.js, one ES module with npm dependencies left external and the platform JSON
 * inlined), its type declarations (dist/types) and the prebuilt schema (dist/schema.json).
 *
 *   node packages/definitions/scripts/build.mjs
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(pkg, 'dist');
const started = Date.now();
rmSync(join(dist, 'index.js'), { force: true });
rmSync(join(dist, 'types'), { recursive: true, force: true });
await build({
  entryPoints: [join(pkg, 'src', 'index.ts')],
  outfile: join(dist, 'index.js'),
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
const tsc = join(pkg, '..', '..', 'node_modules', '.bin', 'tsc');
execFileSync(tsc, ['-p', join(pkg, 'tsconfig.build.json')], { stdio: 'inherit' });
console.log(`@hearth/definitions: dist/index.js, dist/types in ${Date.now() - started} ms`);
execFileSync(process.execPath, [join(pkg, 'scripts', 'build-schema.mjs')], { stdio: 'inherit' });
