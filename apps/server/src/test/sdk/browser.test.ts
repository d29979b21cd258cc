/**
 * The SDK in a real browser: @hearth/core bundled by esbuild for the browser, loaded by a page
 * served from another origin (so CORS is exercised), driven in headless Chromium. The page signs
 * in (when the server has sign-in), creates and reads a resource, and uploads a Binary with
 * progress through XMLHttpRequest. Skipped when Chromium is not installed.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '@hearth/core';
import { createTestApp, type TestApp } from '../app.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, authConfig, hasSignIn } from './server.test-util.js';

const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);

let t: TestApp;
let page: Server;
let pageUrl: string;
let browser: Browser;
let signIn = false;

/** The SDK as one browser script that puts its exports on `window.Hearth`. */
async function bundleSdk(): Promise<string> {
  const result = await build({
    stdin: {
      contents: "import * as Hearth from '@hearth/core'; (globalThis as any).Hearth = Hearth;",
      loader: 'ts',
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
    },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    conditions: ['source'],
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

beforeAll(async () => {
  if (!available) {
    return;
  }
  t = await createTestApp({ listen: true, config: authConfig() });
  signIn = await hasSignIn(t.baseUrl);
  const script = await bundleSdk();
  page = createServer((req, res) => {
    if (req.url === '/sdk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    } else {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>SDK</title><script src="/sdk.js"></script>');
    }
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (page ? page.close(resolve) : resolve(undefined)));
  await t?.close();
});

describe.skipIf(!available)('HearthClient in Chromium', () => {
  it('signs in, creates and reads a resource, and uploads with progress from a page', async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (err) => errors.push(err.message));
    await tab.goto(pageUrl);
    const result = await tab.evaluate(
      async ({ baseUrl, email, password, signIn }) => {
        const { HearthClient, LocalStorage } = (globalThis as unknown as { Hearth: typeof Sdk }).Hearth;
        const hearth = new HearthClient({ baseUrl, storage: new LocalStorage('sdk-test:') });
        let profileType: string | undefined;
        if (signIn) {
          profileType = (await hearth.signInWithPassword({ email, password })).resourceType;
        }
        const created = await hearth.createResource({
          resourceType: 'Patient',
          name: [{ given: ['Browser'], family: 'Tester' }],
        });
        const read = await hearth.readResource('Patient', created.id as string);
        // Count XMLHttpRequests: an upload with onProgress must go through one in a browser.
        type Xhr = { prototype: { open: (...args: unknown[]) => void } };
        const xhr = (globalThis as unknown as { XMLHttpRequest: Xhr }).XMLHttpRequest;
        const open = xhr.prototype.open;
        let xhrOpens = 0;
        xhr.prototype.open = function (this: unknown, ...args: unknown[]) {
          xhrOpens++;
          return open.apply(this, args);
        };
        const progress: number[] = [];
        const binary = await hearth.createBinary({
          contentType: 'text/plain',
          data: new Blob(['x'.repeat(200_000)]),
          onProgress: (e) => progress.push(e.loaded),
        });
        const text = await (await hearth.download(`Binary/${binary.id}`)).text();
        return {
          profileType,
          storedSession:
            (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem(
              'sdk-test:activeLogin',
            ) !== null,
          xhrOpens,
          id: created.id,
          readName: read.name?.[0]?.family,
          progressLast: progress[progress.length - 1],
          downloaded: text.length,
        };
      },
      { baseUrl: t.baseUrl, email: ADMIN_EMAIL, password: ADMIN_PASSWORD, signIn },
    );
    expect(errors).toEqual([]);
    expect(result.id).toBeTruthy();
    expect(result.readName).toBe('Tester');
    expect(result.progressLast).toBe(200_000);
    expect(result.xhrOpens).toBe(1);
    expect(result.downloaded).toBe(200_000);
    if (signIn) {
      expect(result.profileType).toBeTruthy();
      expect(result.storedSession).toBe(true);
    }
    await tab.close();
  });
});
