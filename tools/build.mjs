// Builds the deployables: bundles each app's TypeScript (with the workspace packages inlined)
// into dist/, leaving npm dependencies external. Type checking is `npm run typecheck`.
import { build } from 'esbuild';
import { readFileSync, existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

const root = JSON.parse(readFileSync('package.json', 'utf8'));

function externalsOf(pkgPath) {
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  return Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies });
}

// `!apps/docs`-style patterns exclude a folder from the workspaces (the docs site has its own install).
const excluded = new Set(root.workspaces.filter((p) => p.startsWith('!')).map((p) => p.slice(1)));
const workspaces = root.workspaces
  .filter((p) => !p.startsWith('!'))
  .flatMap((pattern) => {
    const dir = pattern.replace('/*', '');
    return execSync(`ls ${dir}`, { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((name) => `${dir}/${name}`)
      .filter((path) => !excluded.has(path) && existsSync(`${path}/package.json`));
  });
// Every npm dependency of any workspace stays external; @hearth/* sources are bundled.
const external = [...new Set(workspaces.flatMap((ws) => externalsOf(`${ws}/package.json`)))].filter(
  (name) => !name.startsWith('@hearth/'),
);

// `--server-only` builds just the server bundle (tests that spawn it); `--server-out=path` writes it elsewhere.
const serverOnly = process.argv.includes('--server-only');
const serverOut = process.argv.find((a) => a.startsWith('--server-out='))?.slice('--server-out='.length);
const entries = [
  { entry: 'apps/server/src/main.ts', out: serverOut ?? 'apps/server/dist/main.js' },
  { entry: 'tools/bench/bench.ts', out: 'tools/bench/dist/bench.js' },
  { entry: 'apps/cli/src/main.ts', out: 'apps/cli/dist/main.js', banner: '#!/usr/bin/env node' },
  { entry: 'apps/agent/src/main.ts', out: 'apps/agent/dist/main.js' },
]
  .filter((e) => existsSync(e.entry))
  .filter((e) => !serverOnly || e.entry === 'apps/server/src/main.ts');

const started = Date.now();
// The compact FHIR type schema, built once here rather than by the first server process; a full
// build also writes @hearth/definitions' library and declarations (for consumers outside the repo).
execSync(`node packages/definitions/scripts/${serverOnly ? 'build-schema.mjs' : 'build.mjs'}`, { stdio: 'inherit' });
for (const e of entries) {
  await build({
    entryPoints: [e.entry],
    outfile: e.out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    conditions: ['source'],
    external,
    banner: {
      js: [
        e.banner ?? '',
        // CommonJS dependencies bundled into ESM still call require().
        "import { createRequire as __hearthCreateRequire } from 'node:module'; const require = __hearthCreateRequire(import.meta.url);",
      ].join('\n'),
    },
    logLevel: 'warning',
  });
}
// Package builds (publishable ESM/CJS + declarations), then app builds with their own steps.
for (const hook of ['packages/fhir-types/scripts/build.mjs', 'packages/core/scripts/build.mjs', 'apps/app/build.mjs']) {
  if (existsSync(hook) && !serverOnly) {
    execSync(`node ${hook}`, { stdio: 'inherit' });
  }
}
console.log(`built ${entries.map((e) => e.out).join(', ')} in ${Date.now() - started} ms`);
