// Builds the web app into apps/app/dist with Vite (hooked into the root `npm run build`).
import { build } from 'vite';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const started = Date.now();
await build({ configFile: join(root, 'vite.config.ts'), root, logLevel: 'warn' });
console.log(`built apps/app/dist in ${Date.now() - started} ms`);
