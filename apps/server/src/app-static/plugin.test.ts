import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStaticPlugin } from './plugin.js';

describe('app static plugin', () => {
  let dir: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hearth-app-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(dir, 'assets', 'index-abc.js'), `console.log(${JSON.stringify('x'.repeat(5000))});`);
    writeFileSync(join(dir, '..', 'secret.txt'), 'outside');
    app = Fastify();
    app.get('/fhir/R4/Patient', async () => ({ resourceType: 'Bundle' }));
    app.get('/admin/projects/:id', async () => ({ project: true }));
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ resourceType: 'OperationOutcome' }));
    await app.register(appStaticPlugin, { root: dir });
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(dir, '..', 'secret.txt'), { force: true });
  });

  it('serves built files, hashed assets cached forever and gzipped when accepted', async () => {
    const res = await app.inject({ url: '/assets/index-abc.js', headers: { 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/javascript');
    expect(res.headers['cache-control']).toContain('immutable');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.rawPayload).toString()).toContain('console.log');
  });

  it('answers app routes with index.html (SPA fallback), never cached', async () => {
    for (const url of ['/', '/signin', '/Patient/123/history?x=1', '/admin/project']) {
      const res = await app.inject({ url, headers: { accept: 'text/html' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain('<div id="root">');
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it('leaves the API alone: its routes answer, unknown API paths 404 with an OperationOutcome', async () => {
    expect((await app.inject({ url: '/fhir/R4/Patient' })).json()).toEqual({ resourceType: 'Bundle' });
    expect((await app.inject({ url: '/admin/projects/1', headers: { accept: 'text/html' } })).json()).toEqual({
      project: true,
    });
    for (const url of [
      '/fhir/R4/Patient/1/$nothing',
      '/auth/nothing',
      '/admin/nothing',
      '/healthcheck/x',
      '/missing.js',
    ]) {
      const res = await app.inject({ url, headers: { accept: 'application/json' } });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ resourceType: 'OperationOutcome' });
    }
  });

  it('never serves files outside its folder', async () => {
    for (const url of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt']) {
      const res = await app.inject({ url, headers: { accept: 'text/html' } });
      expect(res.body, url).not.toContain('outside');
    }
  });
});
