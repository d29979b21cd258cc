/**
 * Serves the web app (apps/app/dist) at `/`: its files, and index.html for any other page path
 * so that the app's router handles it (single-page app fallback). Registered after the API
 * routes: a path they serve never reaches here, and an unknown API path still answers with a 404
 * OperationOutcome unless a browser asks for a page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

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
];

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.svg', '.txt', '.map']);

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

interface CachedFile {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  immutable: boolean;
}

export async function appStaticPlugin(app: FastifyInstance, options: AppStaticOptions): Promise<void> {
  const root = resolve(options.root);
  // Files are read (and compressed) once: the built app does not change while the server runs.
  const cache = new Map<string, CachedFile | null>();

  function load(path: string): CachedFile | null {
    let file = cache.get(path);
    if (file !== undefined) return file;
    file = null;
    const full = resolve(root, `.${path}`);
    if ((full === root || full.startsWith(root + sep)) && existsSync(full) && statSync(full).isFile()) {
      const ext = extname(full).toLowerCase();
      const body = readFileSync(full);
      file = {
        body,
        gzip: COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body) : undefined,
        type: CONTENT_TYPES[ext] ?? 'application/octet-stream',
        // Vite names built assets by content hash.
        immutable: path.startsWith('/assets/'),
      };
    }
    cache.set(path, file);
    return file;
  }

  function send(request: FastifyRequest, reply: FastifyReply, file: CachedFile): FastifyReply {
    reply.header('content-type', file.type);
    reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('vary', 'accept-encoding');
    const acceptsGzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
    if (file.gzip && acceptsGzip) {
      reply.header('content-encoding', 'gzip');
      return reply.send(file.gzip);
    }
    return reply.send(file.body);
  }

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
