/**
 * A built site's files (the web app's dist, the docs site's build) served from memory: each read
 * and, when worth it, gzipped once (a build does not change while the server runs), answered
 * with its type, caching by content-hashed name, and gzip when the browser takes it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';

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

export interface StaticFile {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  /** Named by content hash (under /assets/): cached for a year. */
  immutable: boolean;
}

export interface StaticFiles {
  /** The file at a path below the root (`/assets/x.js`), or null: missing, a folder, or outside the root. */
  load(path: string): StaticFile | null;
  send(request: FastifyRequest, reply: FastifyReply, file: StaticFile, status?: number): FastifyReply;
}

export function staticFiles(rootDir: string): StaticFiles {
  const root = resolve(rootDir);
  const cache = new Map<string, StaticFile | null>();
  return {
    load(path) {
      let file = cache.get(path);
      if (file !== undefined) return file;
      file = null;
      const full = resolve(root, `.${path}`);
      if (
        !path.includes('\0') &&
        (full === root || full.startsWith(root + sep)) &&
        existsSync(full) &&
        statSync(full).isFile()
      ) {
        const ext = extname(full).toLowerCase();
        const body = readFileSync(full);
        file = {
          body,
          gzip: COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body) : undefined,
          type: CONTENT_TYPES[ext] ?? 'application/octet-stream',
          // Vite and Docusaurus both name their bundles by content hash under /assets/.
          immutable: path.startsWith('/assets/'),
        };
      }
      cache.set(path, file);
      return file;
    },
    send(request, reply, file, status = 200) {
      reply.code(status);
      reply.header('content-type', file.type);
      reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      reply.header('x-content-type-options', 'nosniff');
      reply.header('vary', 'accept-encoding');
      if (file.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
        reply.header('content-encoding', 'gzip');
        return reply.send(file.gzip);
      }
      return reply.send(file.body);
    },
  };
}
