/**
 * The SDK in a real browser: @hearth/core bundled by esbuild for the browser, loaded by a page
 * served from another origin (so CORS is exercised), driven in headless Chromium. The page signs
 * in with email and password, creates and reads a resource, and uploads a Binary with progress
 * reported by XMLHttpRequest; a second page signs in through the redirect: the server's
 * /oauth2/authorize page, back to the page with a code, processCode. Without Chromium: skipped
 * with a warning, or a failure under CI (test/required.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Sdk from '@hearth/core';
import { createTestApp, type TestApp } from '../app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite } from '../chromium.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, authConfig } from './server.test-util.js';

const available = chromiumForSuite();

let t: TestApp;
let page: Server;
let pageUrl: string;
let browser: Browser;
let clientId: string;

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
  // The client of the redirect sign-in: its redirect URI is the page.
  const admin = new Sdk.HearthClient({ baseUrl: t.baseUrl, storage: new Sdk.MemoryStorage(), cacheTime: 0 });
  await admin.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  const projectId = admin.getProject()?.reference?.split('/')[1] as string;
  clientId = (await admin.createClient(projectId, { name: 'SDK browser test', redirectUri: pageUrl })).id as string;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      ...CHROMIUM_ARGS,
      // A name for the page that is not localhost: a page there is not a secure context.
      '--host-resolver-rules=MAP sdk-page.test 127.0.0.1',
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (page ? page.close(resolve) : resolve(undefined)));
  await t?.close();
});

type Window = { Hearth: typeof Sdk; localStorage: { getItem(k: string): string | null }; location: { href: string } };

describe.skipIf(!available)('HearthClient in Chromium', () => {
  it('signs in, creates and reads a resource, and uploads with progress from XMLHttpRequest', async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (err) => errors.push(err.message));
    await tab.goto(pageUrl);
    const result = await tab.evaluate(
      async ({ baseUrl, email, password }) => {
        const { HearthClient, LocalStorage } = (globalThis as unknown as Window).Hearth;
        const hearth = new HearthClient({ baseUrl, storage: new LocalStorage('sdk-test:') });
        const profileType = (await hearth.signInWithPassword({ email, password })).resourceType;
        const created = await hearth.createResource({
          resourceType: 'Patient',
          name: [{ given: ['Browser'], family: 'Tester' }],
        });
        const read = await hearth.readResource('Patient', created.id as string);
        // Watch XMLHttpRequest: an upload with onProgress must go through one, and the progress
        // the SDK reports must be the upload events of that request.
        type Xhr = {
          prototype: {
            open: (...args: unknown[]) => void;
            send: (...args: unknown[]) => void;
            upload: { addEventListener(type: string, fn: (e: { loaded: number }) => void): void };
          };
        };
        const xhr = (globalThis as unknown as { XMLHttpRequest: Xhr }).XMLHttpRequest;
        const { open, send } = xhr.prototype;
        let xhrOpens = 0;
        const uploadEvents: number[] = [];
        xhr.prototype.open = function (this: unknown, ...args: unknown[]) {
          xhrOpens++;
          return open.apply(this, args);
        };
        xhr.prototype.send = function (this: Xhr['prototype'], ...args: unknown[]) {
          this.upload.addEventListener('progress', (e) => uploadEvents.push(e.loaded));
          return send.apply(this, args);
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
          storedSession: (globalThis as unknown as Window).localStorage.getItem('sdk-test:activeLogin') !== null,
          xhrOpens,
          uploadEvents,
          progress,
          id: created.id,
          readName: read.name?.[0]?.family,
          downloaded: text.length,
        };
      },
      { baseUrl: t.baseUrl, email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    );
    expect(errors).toEqual([]);
    expect(result.profileType).toBe('Practitioner');
    expect(result.storedSession).toBe(true);
    expect(result.id).toBeTruthy();
    expect(result.readName).toBe('Tester');
    expect(result.xhrOpens).toBe(1);
    expect(result.uploadEvents.length).toBeGreaterThan(0);
    expect(result.uploadEvents.at(-1)).toBe(200_000);
    expect(result.progress).toEqual(result.uploadEvents);
    expect(result.downloaded).toBe(200_000);
    await tab.close();
  });

  it('shows an attachment in an <img> by its signed URL, with no Authorization header', async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (err) => errors.push(err.message));
    await tab.goto(pageUrl);
    const result = await tab.evaluate(
      async ({ baseUrl, email, password }) => {
        const { HearthClient } = (globalThis as unknown as Window).Hearth;
        const hearth = new HearthClient({ baseUrl });
        await hearth.signInWithPassword({ email, password });
        // A 2x3 red PNG.
        const png = Uint8Array.from(
          atob('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEElEQVR4nGP4z8AARAwoFABE0AX7pM/egAAAAABJRU5ErkJggg=='),
          (c) => c.charCodeAt(0),
        );
        const binary = await hearth.createBinary({ contentType: 'image/png', data: new Blob([png]) });
        const patient = await hearth.createResource({
          resourceType: 'Patient',
          photo: [{ contentType: 'image/png', url: `Binary/${binary.id}` }],
        });
        const read = await hearth.readResource('Patient', patient.id as string);
        const url = read.photo?.[0]?.url as string;
        interface Img {
          alt: string;
          src: string;
          naturalWidth: number;
          naturalHeight: number;
          onload: () => void;
          onerror: () => void;
        }
        const doc = (
          globalThis as unknown as { document: { createElement(tag: 'img'): Img; body: { append(e: Img): void } } }
        ).document;
        const load = (src: string) =>
          new Promise<{ ok: boolean; width: number; height: number }>((resolve) => {
            const img = doc.createElement('img');
            img.alt = 'Patient photo';
            img.onload = () => resolve({ ok: true, width: img.naturalWidth, height: img.naturalHeight });
            img.onerror = () => resolve({ ok: false, width: 0, height: 0 });
            img.src = src;
            doc.body.append(img);
          });
        return {
          url,
          shown: await load(url),
          tampered: await load(url.replace(/sig=.{4}/, 'sig=AAAA')),
          unsigned: await load(`${baseUrl}fhir/R4/Binary/${binary.id}`),
        };
      },
      { baseUrl: t.baseUrl, email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    );
    expect(errors).toEqual([]);
    expect(result.url).toMatch(new RegExp(`^${t.baseUrl}storage/[\\w-]+\\?exp=\\d+&sig=`));
    expect(result.shown).toEqual({ ok: true, width: 2, height: 3 });
    expect(result.tampered.ok).toBe(false);
    // Without the signature the browser has no way in: the FHIR URL needs a token it does not send.
    expect(result.unsigned.ok).toBe(false);
    await tab.close();
  });

  it("signs in through the redirect: the server's sign-in page, back to the page with a code", async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (err) => errors.push(err.message));
    await tab.goto(pageUrl);
    // The first call sends the browser to /oauth2/authorize (PKCE verifier and state kept in localStorage).
    await tab.evaluate(
      ({ baseUrl, clientId }) => {
        const { HearthClient, LocalStorage } = (globalThis as unknown as Window).Hearth;
        const hearth = new HearthClient({ baseUrl, clientId, storage: new LocalStorage('redirect:') });
        void hearth.signInWithRedirect();
      },
      { baseUrl: t.baseUrl, clientId },
    );
    await tab.waitForURL(/\/oauth2\/authorize\?/);
    const authorize = new URL(tab.url());
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('redirect_uri')).toBe(pageUrl);
    await tab.fill('#email', ADMIN_EMAIL);
    await tab.fill('#password', ADMIN_PASSWORD);
    await Promise.all([tab.waitForURL((url) => url.href.startsWith(`${pageUrl}?`)), tab.click('button[type=submit]')]);
    expect(new URL(tab.url()).searchParams.get('code')).toBeTruthy();
    // Back on the page: the second call exchanges the code and cleans the URL.
    const result = await tab.evaluate(
      async ({ baseUrl, clientId }) => {
        const w = globalThis as unknown as Window;
        const { HearthClient, LocalStorage } = w.Hearth;
        const hearth = new HearthClient({ baseUrl, clientId, storage: new LocalStorage('redirect:') });
        const profile = await hearth.signInWithRedirect();
        const patient = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'Redirected' }] });
        return {
          profileType: profile?.resourceType,
          patientId: patient.id,
          href: w.location.href,
          pending: w.localStorage.getItem('redirect:pendingAuthorize'),
        };
      },
      { baseUrl: t.baseUrl, clientId },
    );
    expect(errors).toEqual([]);
    expect(result.profileType).toBe('Practitioner');
    expect(result.patientId).toBeTruthy();
    expect(result.href).toBe(pageUrl);
    expect(result.pending).toBeNull();
    await tab.close();
  });
  it('renews a session shared by two tabs once: the second tab takes the tokens the first renewed', async () => {
    const context = await browser.newContext();
    const [tab1, tab2] = [await context.newPage(), await context.newPage()];
    const errors: string[] = [];
    for (const tab of [tab1, tab2]) {
      tab.on('pageerror', (err) => errors.push(err.message));
      await tab.goto(pageUrl);
    }
    await tab1.evaluate(
      async ({ baseUrl, email, password }) => {
        const { HearthClient, LocalStorage } = (globalThis as unknown as Window).Hearth;
        const hearth = new HearthClient({ baseUrl, storage: new LocalStorage('tabs:') });
        await hearth.signInWithPassword({ email, password });
        // The stored access token is about to expire: the next request in any tab renews it.
        const storage = (globalThis as unknown as { localStorage: Sdk.ClientStorage }).localStorage;
        const login = JSON.parse(storage.getItem('tabs:activeLogin') as string) as { expiresAt: number };
        storage.setItem(
          'tabs:activeLogin',
          JSON.stringify({ ...login, expiresAt: Date.now() + 1000, issuedAt: Date.now() - 3_599_000 }),
        );
      },
      { baseUrl: t.baseUrl, email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    );
    const work = (tab: typeof tab1) =>
      tab.evaluate(async (baseUrl) => {
        const { HearthClient, LocalStorage } = (globalThis as unknown as Window).Hearth;
        let refreshes = 0;
        const hearth = new HearthClient({
          baseUrl,
          storage: new LocalStorage('tabs:'),
          cacheTime: 0,
          fetch: (input, init) => {
            if (String(init?.body ?? '').includes('grant_type=refresh_token')) {
              refreshes++;
            }
            return fetch(input, init);
          },
        });
        const bundles = await Promise.all([1, 2, 3].map(() => hearth.search('Patient', { _count: 1 })));
        return { refreshes, ok: bundles.every((b) => b.resourceType === 'Bundle'), token: hearth.getAccessToken() };
      }, t.baseUrl);
    const [one, two] = await Promise.all([work(tab1), work(tab2)]);
    expect(errors).toEqual([]);
    expect([one.ok, two.ok]).toEqual([true, true]);
    // One renewal under the tabs' Web Lock; a second tab that still read the old tokens (tabs'
    // localStorage syncs asynchronously) is refused as a race ('already used'), not revoked, and
    // takes the first tab's tokens once they arrive.
    expect(one.refreshes + two.refreshes).toBeGreaterThanOrEqual(1);
    expect(one.refreshes + two.refreshes).toBeLessThanOrEqual(2);
    expect(one.token).toBe(two.token);
    // The sign-in is still good in both tabs afterwards (no refresh token was used twice).
    const again = await work(tab2);
    expect(again).toMatchObject({ ok: true, refreshes: 0 });
    await context.close();
  });
  it('signs in from a page that is not a secure context (plain HTTP, no crypto.subtle)', async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (err) => errors.push(err.message));
    await tab.goto(pageUrl.replace('localhost', 'sdk-page.test'));
    const result = await tab.evaluate(
      async ({ baseUrl, email, password }) => {
        const w = globalThis as unknown as Window & { isSecureContext: boolean; crypto: { subtle?: unknown } };
        const { HearthClient, MemoryStorage, generateId } = w.Hearth;
        const hearth = new HearthClient({ baseUrl, storage: new MemoryStorage() });
        const profile = await hearth.signInWithPassword({ email, password });
        const patient = await hearth.createResource({
          resourceType: 'Patient',
          identifier: [{ system: 'urn:test', value: generateId() }],
        });
        return {
          secure: w.isSecureContext,
          subtle: w.crypto.subtle !== undefined,
          profileType: profile.resourceType,
          id: patient.id,
          generated: patient.identifier?.[0]?.value,
        };
      },
      { baseUrl: t.baseUrl, email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    );
    expect(errors).toEqual([]);
    expect(result).toMatchObject({ secure: false, subtle: false, profileType: 'Practitioner' });
    expect(result.id).toBeTruthy();
    expect(result.generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await tab.close();
  });
});
