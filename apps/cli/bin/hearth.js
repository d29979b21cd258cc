#!/usr/bin/env node
// The `hearth` executable npm links into node_modules/.bin: it runs the bundle `npm run build`
// writes to ../dist/main.js. (A committed launcher, because npm links a bin only when its file
// exists at install time, and a fresh `npm ci` comes before the build.)
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  console.error('hearth is not built yet: run `npm run build` at the root of the Hearth repository.');
  process.exit(1);
}
await import(main.href);
