/**
 * CORS as a browser sees it: pages served from other origins than the server's (a tiny node:http
 * server, reached as http://127.0.0.1:PAGE and http://localhost:PAGE) call the FHIR API with
 * fetch in headless Chromium. The server allows `*` and the localhost page by name. Without
 * Chromium: skipped with a warning, or a failure under CI (test/required.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite } from '../test/chromium.js';

const available = chromiumForSuite();

let t: TestApp;
let pageServer: Server;
/** Not listed by name: allowed through `*`, without credentials. */
let wildcardPage: string;
/** Listed by name in HEARTH_CORS_ORIGINS: allowed with credentials. */
let listedPage: string;
let browser: Browser;

beforeAll(async () => {
  if (!available) {
    return;
  }
  pageServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Another origin</title>');
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  const port = (pageServer.address() as AddressInfo).port;
  wildcardPage = `http://127.0.0.1:${port}/`;
  listedPage = `http://localhost:${port}/`;
  t = await createTestApp({ listen: true, config: { corsOrigins: ['*', listedPage.slice(0, -1)] } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pageServer ? pageServer.close(resolve) : resolve(undefined)));
  await t?.close();
});

async function openPage(url: string): Promise<Page> {
  const tab = await browser.newPage();
  await tab.goto(url);
  return tab;
}

describe.runIf(available)('CORS in Chromium', () => {
  it('a page on another origin creates, PUTs, PATCHes and DELETEs with If-Match and reads ETag, Location and errors', async () => {
    const tab = await openPage(wildcardPage);
    expect(new URL(tab.url()).origin).not.toBe(new URL(t.baseUrl).origin);
    const result = await tab.evaluate(
      async ({ base, token }) => {
        const auth = { authorization: `Bearer ${token}` };
        const json = { ...auth, 'content-type': 'application/fhir+json', prefer: 'return=representation' };
        const created = await fetch(`${base}fhir/R4/Patient`, {
          method: 'POST',
          headers: { ...json, 'x-request-id': 'cors-browser-1' },
          body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Origin' }] }),
        });
        const id = ((await created.json()) as { id: string }).id;
        const url = `${base}fhir/R4/Patient/${id}`;
        const put = await fetch(url, {
          method: 'PUT',
          headers: { ...json, 'if-match': created.headers.get('etag') ?? '' },
          body: JSON.stringify({ resourceType: 'Patient', id, name: [{ family: 'Put' }] }),
        });
        const patch = await fetch(url, {
          method: 'PATCH',
          headers: {
            ...auth,
            'content-type': 'application/json-patch+json',
            'if-match': put.headers.get('etag') ?? '',
          },
          body: JSON.stringify([{ op: 'replace', path: '/name/0/family', value: 'Patched' }]),
        });
        const patched = (await patch.json()) as { name: { family: string }[] };
        const stale = await fetch(url, {
          method: 'DELETE',
          headers: { ...auth, 'if-match': put.headers.get('etag') ?? '' },
        });
        const staleOutcome = (await stale.json()) as { resourceType: string };
        const deleted = await fetch(url, {
          method: 'DELETE',
          headers: { ...auth, 'if-match': patch.headers.get('etag') ?? '' },
        });
        const gone = await fetch(url, { headers: auth });
        return {
          created: {
            status: created.status,
            etag: created.headers.get('etag'),
            location: created.headers.get('location'),
            lastModified: created.headers.get('last-modified'),
            requestId: created.headers.get('x-request-id'),
          },
          put: { status: put.status, etag: put.headers.get('etag') },
          patch: { status: patch.status, etag: patch.headers.get('etag'), family: patched.name[0].family },
          stale: { status: stale.status, body: staleOutcome.resourceType },
          deleted: deleted.status,
          gone: gone.status,
        };
      },
      { base: t.baseUrl, token: t.token },
    );
    expect(result.created).toEqual({
      status: 201,
      etag: 'W/"1"',
      location: expect.stringMatching(/\/fhir\/R4\/Patient\/[^/]+\/_history\/1$/),
      lastModified: expect.any(String),
      requestId: 'cors-browser-1',
    });
    expect(result.put).toEqual({ status: 200, etag: 'W/"2"' });
    expect(result.patch).toEqual({ status: 200, etag: 'W/"3"', family: 'Patched' });
    expect(result.stale).toEqual({ status: 412, body: 'OperationOutcome' });
    expect([200, 204]).toContain(result.deleted);
    expect(result.gone).toBe(410);
    await tab.close();
  });

  it('sends credentials only from an origin listed by name; through * the browser refuses a credentialed request', async () => {
    const call = (tab: Page) =>
      tab.evaluate(
        async ({ base, token }) => {
          try {
            const res = await fetch(`${base}fhir/R4/Patient?_count=1`, {
              method: 'GET',
              credentials: 'include',
              headers: { authorization: `Bearer ${token}` },
            });
            return { status: res.status, error: '' };
          } catch (err) {
            return { status: 0, error: String(err) };
          }
        },
        { base: t.baseUrl, token: t.token },
      );
    const listed = await openPage(listedPage);
    expect(await call(listed)).toEqual({ status: 200, error: '' });
    const other = await openPage(wildcardPage);
    expect(await call(other)).toEqual({ status: 0, error: expect.stringContaining('Failed to fetch') });
    await listed.close();
    await other.close();
  });
});
