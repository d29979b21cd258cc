import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createBot, deploy, get, post } from './testing.js';

let t: TestApp;
let receiver: Server;
let receiverPort = 0;
let receiverHits = 0;

beforeAll(async () => {
  t = await createTestApp({ listen: true, config: { botTimeoutMs: 1500, botMemoryLimitMb: 32 } });
  receiver = createServer((_req, res) => {
    receiverHits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('secret internal data');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function runBot(code: string, input: unknown = {}): Promise<{ status: number; text: string }> {
  const bot = await createBot(t);
  await deploy(t, bot.id, code, 'hostile.js');
  return post(t, `fhir/R4/Bot/${bot.id}/$execute`, input);
}

/** The server answers its health check within `ms` (its event loop is free). */
async function healthyWithin(ms: number): Promise<void> {
  const started = Date.now();
  const res = await get(t, 'healthcheck');
  expect(res.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(ms);
}

describe('hostile bots fail alone; the server keeps serving', () => {
  it('an infinite loop is stopped at the time limit, and the server answers meanwhile', async () => {
    const bot = await createBot(t);
    await deploy(t, bot.id, 'export async function handler() { while (true) {} }', 'loop.js');
    const started = Date.now();
    const running = post(t, `fhir/R4/Bot/${bot.id}/$execute`, {});
    await new Promise((r) => setTimeout(r, 300));
    await healthyWithin(500);
    const read = await get(t, `fhir/R4/Bot/${bot.id}`);
    expect(read.status).toBe(200);
    const res = await running;
    expect(res.status).toBe(400);
    expect(res.text).toContain('timed out after 1500 ms');
    expect(Date.now() - started).toBeLessThan(5000);
    await healthyWithin(500);
  });

  it('an infinite loop after an await (in a continuation) is stopped too', async () => {
    const res = await runBot(
      `export async function handler(client) { await client.search('Patient', '_count=1'); for (;;) {} }`,
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain('timed out');
    await healthyWithin(500);
  });

  it('a promise that never settles is stopped at the time limit', async () => {
    const res = await runBot('export async function handler() { await new Promise(() => {}); }');
    expect(res.status).toBe(400);
    expect(res.text).toContain('timed out');
  });

  it('a memory bomb hits the isolate heap limit', async () => {
    const res = await runBot(
      `export async function handler() { const a = []; for (;;) { a.push(new Array(1e5).fill(Math.random())); } }`,
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain('memory limit');
    await healthyWithin(500);
    const mem = await runBot(
      `export async function handler() { let s = 'x'; const keep = []; for (;;) { s = s + s; keep.push(s + Math.random()); } }`,
    );
    expect(mem.status).toBe(400);
    expect(mem.text).toMatch(/memory limit|Invalid string length/);
  });

  it('process.exit is not there', async () => {
    const res = await runBot('export async function handler() { process.exit(1); }');
    expect(res.status).toBe(400);
    expect(res.text).toContain('process is not defined');
    await healthyWithin(500);
  });

  it('process.env is not there, nor any other path to the host', async () => {
    const res = await runBot(`export async function handler() {
      const found = [];
      for (const name of ['process', 'require', 'module', 'Buffer', 'global', '__dirname', 'setImmediate', '__hostSend', '__hostLog', 'Deno', 'Bun']) {
        if (typeof globalThis[name] !== 'undefined') found.push(name);
      }
      let escaped;
      try { escaped = typeof (function () {}).constructor('return process')(); } catch (e) { escaped = e.message; }
      let env;
      try { env = JSON.stringify(process.env); } catch (e) { env = e.message; }
      return { found, escaped, env };
    }`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({
      found: [],
      escaped: 'process is not defined',
      env: 'process is not defined',
    });
    expect(res.text).not.toContain('DATABASE_URL');
    expect(res.text).not.toContain('postgres');
  });

  it("require('fs') and importing Node modules fail", async () => {
    const required = await runBot(
      `export async function handler() { const fs = require('fs'); return fs.readFileSync('/etc/passwd', 'utf8'); }`,
    );
    expect(required.status).toBe(400);
    expect(required.text).toMatch(/Cannot load \\"fs\\"|require is not defined/);

    const imported = await runBot(`import { readFileSync } from 'node:fs';
      export async function handler() { return readFileSync('/etc/passwd', 'utf8'); }`);
    expect(imported.status).toBe(400);
    expect(imported.text).toContain('Cannot load');
    expect(imported.text).not.toContain('root:');

    const dynamic = await runBot(
      `export async function handler() { const fs = await import('fs'); return fs.readFileSync('/etc/passwd', 'utf8'); }`,
    );
    expect(dynamic.status).toBe(400);
    expect(dynamic.text).not.toContain('root:');
    await healthyWithin(500);
  });

  it('each run starts in a fresh context: globals and prototypes a run changes are gone in the next', async () => {
    const bot = await createBot(t);
    await deploy(
      t,
      bot.id,
      `export async function handler() {
        const seen = { polluted: ({}).polluted, counter: globalThis.counter };
        Object.prototype.polluted = 'yes';
        globalThis.counter = (globalThis.counter || 0) + 1;
        return seen;
      }`,
      'state.js',
    );
    for (let i = 0; i < 3; i++) {
      const res = await post(t, `fhir/R4/Bot/${bot.id}/$execute`, {});
      expect(res.json()).toEqual({});
    }
  });

  it('fetch cannot reach loopback, private, link-local or metadata addresses', async () => {
    const res = await runBot(
      `export async function handler(client, event) {
      const out = {};
      for (const url of event.input.urls) {
        try { const r = await fetch(url); out[url] = 'reached ' + r.status + ' ' + (await r.text()); }
        catch (e) { out[url] = e.message; }
      }
      return out;
    }`,
      {
        urls: [
          `http://127.0.0.1:${receiverPort}/`,
          `http://localhost:${receiverPort}/`,
          `http://[::1]:${receiverPort}/`,
          `${t.baseUrl}healthcheck`,
          'http://10.0.0.1/',
          'http://192.168.0.1/',
          'http://172.16.0.1/',
          'http://169.254.169.254/latest/meta-data/',
          'http://[fd00:ec2::254]/',
          'file:///etc/passwd',
        ],
      },
    );
    expect(res.status).toBe(200);
    const out = JSON.parse(res.text) as Record<string, string>;
    for (const [url, message] of Object.entries(out)) {
      expect(message, url).not.toContain('reached');
      expect(message, url).toMatch(/blocked/);
    }
    expect(receiverHits).toBe(0);
  });

  it('many hostile runs at once still leave the server responsive', async () => {
    const loop = await createBot(t);
    await deploy(t, loop.id, 'export async function handler() { for (;;) {} }', 'loop.js');
    const runs = Array.from({ length: 6 }, () => post(t, `fhir/R4/Bot/${loop.id}/$execute`, {}));
    await new Promise((r) => setTimeout(r, 200));
    await healthyWithin(500);
    const results = await Promise.all(runs);
    expect(results.every((r) => r.status === 400)).toBe(true);
    await healthyWithin(500);
  });
});

describe('bot fetch with an allow-list', () => {
  let allowed: TestApp;
  beforeAll(async () => {
    allowed = await createTestApp({ listen: true, db: t.db, config: { outboundAllowList: ['127.0.0.1'] } });
  });
  afterAll(async () => {
    await allowed?.close();
  });

  it('reaches an allow-listed address, but not a name resolving to another loopback address', async () => {
    const bot = await createBot(allowed);
    await deploy(
      allowed,
      bot.id,
      `export async function handler(client, event) {
        const r = await fetch(event.input.url, { method: 'POST', headers: { 'x-test': '1' }, body: { hello: 'world' } });
        let other;
        try { await fetch(event.input.other); } catch (e) { other = e.message; }
        return { status: r.status, ok: r.ok, text: await r.text(), type: r.headers.get('content-type'), other };
      }`,
      'fetch.js',
    );
    const before = receiverHits;
    const res = await post(allowed, `fhir/R4/Bot/${bot.id}/$execute`, {
      url: `http://127.0.0.1:${receiverPort}/`,
      other: `http://127.0.0.2:${receiverPort}/`,
    });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ status: 200, ok: true, text: 'secret internal data', type: 'text/plain' });
    expect(String((res.json() as { other: string }).other)).toContain('blocked');
    expect(receiverHits).toBe(before + 1);
  });
});
