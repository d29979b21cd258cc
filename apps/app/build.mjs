// Builds the web app into apps/app/dist with Vite (hooked into the root `npm run build`);
// `--out-dir=path` writes it elsewhere (the release builder, tools/release/).
import { build } from 'vite';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const outDir = process.argv.find((a) => a.startsWith('--out-dir='))?.slice('--out-dir='.length);
const started = Date.now();
await build({
  configFile: join(root, 'vite.config.ts'),
  root,
  logLevel: 'warn',
  ...(outDir ? { build: { outDir: resolve(outDir), emptyOutDir: true } } : {}),
});
console.log(`built ${outDir ?? 'apps/app/dist'} in ${Date.now() - started} ms`);
