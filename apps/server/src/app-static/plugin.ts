/**
 * Serves the web app (apps/app/dist) at `/`: its files, and index.html for any other page path
 * so that the app's router handles it (single-page app fallback). Registered after the API
 * routes: a path they serve never reaches here, and an unknown API path still answers with a 404
 * OperationOutcome unless a browser asks for a page.
 */
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staticFiles } from './static-files.js';

export interface AppStaticOptions {
  /** The built app: a folder with index.html. */
  root: string;
}

/** Paths of the server's own APIs: never answered with the app unless a browser asks for a page. */
const API_PREFIXES = [
  '/fhir/',
  '/auth/',
  '/oauth2/',
  '/admin/',
  '/api/',
  '/scim/',
  '/ws/',
  '/.well-known/',
  '/healthcheck',
  '/openapi.json',
  '/metrics',
];

/** The app's dist folder beside the server (source or bundled layout), if it has been built. */
export function findAppDist(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    resolve(here, '..', '..', '..', 'app', 'dist'), // apps/server/src/app-static/
    resolve(here, '..', '..', 'app', 'dist'), // apps/server/dist/
    resolve(process.cwd(), 'apps', 'app', 'dist'),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

export async function appStaticPlugin(app: FastifyInstance, options: AppStaticOptions): Promise<void> {
  const { load, send } = staticFiles(options.root);

  app.get('/*', async (request, reply) => {
    let path: string;
    try {
      path = decodeURIComponent(request.url.split('?')[0]);
    } catch {
      return reply.callNotFound();
    }
    const file = path !== '/' && !path.includes('\0') ? load(path) : null;
    if (file) {
      return send(request, reply, file);
    }
    const wantsPage = String(request.headers.accept ?? '').includes('text/html');
    const isApi = API_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix));
    if ((isApi && !wantsPage) || (extname(path) !== '' && !wantsPage)) {
      return reply.callNotFound();
    }
    const index = load('/index.html');
    if (!index) {
      return reply.callNotFound();
    }
    reply.header('content-security-policy', "frame-ancestors 'self'");
    return send(request, reply, index);
  });
}
