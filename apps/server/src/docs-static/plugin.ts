/**
 * Serves the documentation site (apps/docs/build, made by `npm run docs`) at `/docs/`, when it has
 * been built. Docusaurus writes one HTML file per page (`/docs/search/basic` →
 * `search/basic.html`, `/docs/` → `index.html`) and its own 404 page, answered with status 404.
 */
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staticFiles, type StaticFile } from '../app-static/static-files.js';

export interface DocsStaticOptions {
  /** The built site: a folder with index.html. */
  root: string;
}

/** The built site beside the server (source or bundled layout), if `npm run docs` has run. */
export function findDocsBuild(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    resolve(here, '..', '..', '..', 'docs', 'build'), // apps/server/src/docs-static/
    resolve(here, '..', '..', 'docs', 'build'), // apps/server/dist/
    resolve(process.cwd(), 'apps', 'docs', 'build'),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

export async function docsStaticPlugin(app: FastifyInstance, options: DocsStaticOptions): Promise<void> {
  const { load, send } = staticFiles(options.root);

  /** The file of a page path: itself, `{path}.html`, or `{path}/index.html`. */
  function find(relative: string): StaticFile | null {
    if (relative.includes('\0')) return null;
    const trimmed = relative.replace(/\/+$/, '');
    return (
      (relative.endsWith('/') ? null : load(relative)) ??
      (trimmed ? load(`${trimmed}.html`) : null) ??
      load(`${trimmed}/index.html`)
    );
  }

  app.get('/docs', async (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    return reply.redirect(`/docs/${query}`, 301);
  });

  app.get('/docs/*', async (request, reply) => {
    let relative: string;
    try {
      relative = decodeURIComponent(request.url.split('?')[0]).slice('/docs'.length);
    } catch {
      return reply.callNotFound();
    }
    const file = find(relative);
    if (file) return send(request, reply, file);
    const notFound = load('/404.html');
    return notFound ? send(request, reply, notFound, 404) : reply.callNotFound();
  });
}
