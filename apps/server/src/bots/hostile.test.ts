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
  t = await createTestApp({ listen: true, config: { botTimeoutMs: 3000, botMemoryLimitMb: 32 } });
  receiver = createServer((req, res) => {
    receiverHits++;
    if (req.url === '/to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    } else if (req.url === '/to-loopback') {
      res.writeHead(307, { location: `http://127.0.0.2:${receiverPort}/` }).end();
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('secret internal data');
    }
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

/** The server answers its health check. */
async function healthy(): Promise<void> {
  const res = await get(t, 'healthcheck');
  expect(res.status).toBe(200);
}

/**
 * The server answers a health check and a read while a hostile run is still going: the answers
 * come before the run's own (so its event loop is not held by the bot). An ordering, not a timing.
 */
async function servesWhile(run: Promise<unknown>, botId: string): Promise<void> {
  let finished = false;
  void run.then(
    () => (finished = true),
    () => (finished = true),
  );
  await healthy();
  const read = await get(t, `fhir/R4/Bot/${botId}`);
  expect(read.status).toBe(200);
  expect(finished).toBe(false);
}

describe('hostile bots fail alone; the server keeps serving', () => {
  it('an infinite loop is stopped at the time limit, and the server answers meanwhile', async () => {
    const bot = await createBot(t);
    await deploy(t, bot.id, 'export async function handler() { while (true) {} }', 'loop.js');
    const running = post(t, `fhir/R4/Bot/${bot.id}/$execute`, {});
    await servesWhile(running, bot.id);
    const res = await running;
    expect(res.status).toBe(400);
    expect(res.text).toContain('timed out after 3000 ms');
    await healthy();
  });

  it('an infinite loop after an await (in a continuation) is stopped too', async () => {
    const res = await runBot(
      `export async function handler(client) { await client.search('Patient', '_count=1'); for (;;) {} }`,
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain('timed out');
    await healthy();
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
    await healthy();
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
    await healthy();
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
    await healthy();
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
          `http://[::ffff:127.0.0.1]:${receiverPort}/`,
          `http://[::ffff:7f00:1]:${receiverPort}/`,
          `http://2130706433:${receiverPort}/`,
          `${t.baseUrl}healthcheck`,
          'http://10.0.0.1/',
          'http://192.168.0.1/',
          'http://172.16.0.1/',
          'http://169.254.169.254/latest/meta-data/',
          'http://169.254.1.1/',
          'http://[fd00:ec2::254]/',
          'http://[fe80::1]/',
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

  it('many hostile runs at once still leave the server, and other bots, responsive', async () => {
    const loop = await createBot(t);
    await deploy(t, loop.id, 'export async function handler() { for (;;) {} }', 'loop.js');
    const fine = await createBot(t);
    await deploy(t, fine.id, `export async function handler() { return 'still fine'; }`, 'fine.js');
    const runs = Array.from({ length: 6 }, () => post(t, `fhir/R4/Bot/${loop.id}/$execute`, {}));
    await servesWhile(Promise.all(runs), loop.id);
    // Other bots still run meanwhile: the hostile ones hold only their own isolates.
    let loopsOver = false;
    void Promise.all(runs).then(() => (loopsOver = true));
    const other = await post(t, `fhir/R4/Bot/${fine.id}/$execute`, {});
    expect(other.status).toBe(200);
    expect(other.text).toBe('still fine');
    expect(loopsOver).toBe(false);
    const results = await Promise.all(runs);
    expect(results.every((r) => r.status === 400)).toBe(true);
    await healthy();
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
        const redirects = [];
        for (const url of event.input.redirects) {
          try { const x = await fetch(url); redirects.push('reached ' + x.status); } catch (e) { redirects.push(e.message); }
        }
        return { status: r.status, ok: r.ok, text: await r.text(), type: r.headers.get('content-type'), other, redirects };
      }`,
      'fetch.js',
    );
    const before = receiverHits;
    const res = await post(allowed, `fhir/R4/Bot/${bot.id}/$execute`, {
      url: `http://127.0.0.1:${receiverPort}/`,
      other: `http://127.0.0.2:${receiverPort}/`,
      redirects: [`http://127.0.0.1:${receiverPort}/to-metadata`, `http://127.0.0.1:${receiverPort}/to-loopback`],
    });
    expect(res.status).toBe(200);
    const out = res.json() as { other: string; redirects: string[] };
    expect(out).toMatchObject({ status: 200, ok: true, text: 'secret internal data', type: 'text/plain' });
    expect(out.other).toContain('blocked');
    // Each redirect is checked again: the allow-listed first hop is reached, its target is not.
    expect(out.redirects).toHaveLength(2);
    for (const message of out.redirects) {
      expect(message).toContain('blocked');
    }
    expect(receiverHits).toBe(before + 3);
  });
});
