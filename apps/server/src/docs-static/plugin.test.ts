import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStaticPlugin } from '../app-static/plugin.js';
import { docsStaticPlugin } from './plugin.js';

describe('docs static plugin', () => {
  let base: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'hearth-docs-'));
    const docs = join(base, 'build');
    const appDist = join(base, 'app');
    mkdirSync(join(docs, 'assets', 'js'), { recursive: true });
    mkdirSync(join(docs, 'search'), { recursive: true });
    mkdirSync(appDist);
    writeFileSync(join(docs, 'index.html'), '<!doctype html><title>Hearth documentation</title>');
    writeFileSync(join(docs, 'search.html'), '<title>Search</title>');
    writeFileSync(join(docs, 'search', 'basic.html'), '<title>Basic search</title>');
    writeFileSync(join(docs, '404.html'), '<title>Page Not Found</title>');
    writeFileSync(join(docs, 'assets', 'js', 'main.1a2b.js'), `console.log(${JSON.stringify('y'.repeat(4000))});`);
    writeFileSync(join(base, 'secret.txt'), 'outside');
    writeFileSync(join(appDist, 'index.html'), '<div id="root">app</div>');
    app = Fastify();
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ resourceType: 'OperationOutcome' }));
    await app.register(docsStaticPlugin, { root: docs });
    await app.register(appStaticPlugin, { root: appDist });
  });

  afterAll(async () => {
    await app.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('serves the home page at /docs/ and redirects /docs there, keeping the query', async () => {
    const home = await app.inject({ url: '/docs/' });
    expect(home.statusCode).toBe(200);
    expect(home.headers['content-type']).toContain('text/html');
    expect(home.body).toContain('Hearth documentation');
    const bare = await app.inject({ url: '/docs?q=search' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/docs/?q=search');
  });

  it('serves a page path from its .html file, with or without a trailing slash or query', async () => {
    expect((await app.inject({ url: '/docs/search' })).body).toContain('<title>Search</title>');
    expect((await app.inject({ url: '/docs/search/basic' })).body).toContain('Basic search');
    expect((await app.inject({ url: '/docs/search/basic/?x=1' })).body).toContain('Basic search');
  });

  it('serves hashed assets cached forever, gzipped when accepted', async () => {
    const res = await app.inject({ url: '/docs/assets/js/main.1a2b.js', headers: { 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toContain('immutable');
    expect(gunzipSync(res.rawPayload).toString()).toContain('console.log');
    expect((await app.inject({ url: '/docs/search/basic' })).headers['cache-control']).toBe('no-cache');
  });

  it("answers an unknown page with the site's 404 page, and never a file outside the build", async () => {
    const missing = await app.inject({ url: '/docs/no/such/page' });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('Page Not Found');
    for (const url of ['/docs/../secret.txt', '/docs/%2e%2e/secret.txt', '/docs/..%2fsecret.txt', '/docs/%00']) {
      const res = await app.inject({ url });
      expect(res.body, url).not.toContain('outside');
    }
  });

  it('leaves every other path to the app', async () => {
    const res = await app.inject({ url: '/Patient', headers: { accept: 'text/html' } });
    expect(res.body).toContain('app');
  });
});
