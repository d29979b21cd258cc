/**
 * CORS headers of the whole app (preflight and actual responses) for the default `*`, for origins
 * listed by name, and for both at once. The browser side is proved in test/sdk/cors-browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_METHODS, corsOptions } from './cors.js';

const LISTED = 'https://app.example.org';
const OTHER = 'https://evil.example.net';

let db: TestDatabase;
let wildcard: TestApp;
let named: TestApp;
let mixed: TestApp;
let patientUrl: string;

beforeAll(async () => {
  db = await createTestDatabase();
  wildcard = await createTestApp({ db });
  named = await createTestApp({ db, config: { corsOrigins: [LISTED, 'http://localhost:3000'] } });
  mixed = await createTestApp({ db, config: { corsOrigins: ['*', LISTED] } });
  const created = await wildcard.app.inject({
    method: 'POST',
    url: '/fhir/R4/Patient',
    headers: { ...wildcard.authHeaders, 'content-type': 'application/fhir+json' },
    payload: { resourceType: 'Patient', name: [{ family: 'Cors' }] },
  });
  expect(created.statusCode).toBe(201);
  patientUrl = `/fhir/R4/Patient/${created.json<{ id: string }>().id}`;
}, 180_000);

afterAll(async () => {
  await wildcard?.close();
  await named?.close();
  await mixed?.close();
  await db?.drop();
});

function preflight(t: TestApp, origin: string, method: string, headers = 'authorization, content-type, if-match') {
  return t.app.inject({
    method: 'OPTIONS',
    url: patientUrl,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

function list(value: string | string[] | number | undefined): string[] {
  return String(value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

describe('CORS with HEARTH_CORS_ORIGINS=* (the default)', () => {
  it('answers a PATCH preflight from any origin with every method and the FHIR request headers, without credentials', async () => {
    const res = await preflight(wildcard, OTHER, 'PATCH');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(list(res.headers['access-control-allow-methods'])).toEqual(
      expect.arrayContaining(['get', 'head', 'post', 'put', 'patch', 'delete']),
    );
    expect(list(res.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining([
        'authorization',
        'content-type',
        'if-match',
        'if-none-match',
        'if-none-exist',
        'if-modified-since',
        'prefer',
        'x-security-context',
        'x-request-id',
      ]),
    );
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
  });

  it('exposes the FHIR response headers on an actual response and never allows credentials', async () => {
    const res = await wildcard.app.inject({
      method: 'GET',
      url: patientUrl,
      headers: { ...wildcard.authHeaders, origin: OTHER },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(list(res.headers['access-control-expose-headers'])).toEqual(
      expect.arrayContaining([
        'etag',
        'location',
        'content-location',
        'last-modified',
        'x-request-id',
        'x-progress',
        'retry-after',
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
        'ratelimit-policy',
      ]),
    );
  });

  it('carries the CORS headers on error answers too, so a browser script can read the OperationOutcome', async () => {
    const res = await wildcard.app.inject({
      method: 'PUT',
      url: patientUrl,
      headers: { origin: OTHER, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Patient' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('CORS with origins listed by name', () => {
  it('reflects a listed origin with credentials, in the preflight and the actual response', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await preflight(named, LISTED, method);
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(LISTED);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(list(res.headers['access-control-allow-methods'])).toContain(method.toLowerCase());
      expect(list(res.headers.vary)).toContain('origin');
    }
    const res = await named.app.inject({
      method: 'GET',
      url: '/fhir/R4/Patient?_count=1',
      headers: { ...named.authHeaders, origin: LISTED },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(LISTED);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(list(res.headers['access-control-expose-headers'])).toContain('etag');
    expect(list(res.headers.vary)).toContain('origin');
  });

  it('gives an origin that is not listed no CORS headers at all', async () => {
    const pre = await preflight(named, OTHER, 'PATCH');
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    expect(pre.headers['access-control-allow-methods']).toBeUndefined();
    const res = await named.app.inject({
      method: 'GET',
      url: '/fhir/R4/Patient?_count=1',
      headers: { ...named.authHeaders, origin: OTHER },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('CORS with * and a listed origin', () => {
  it('gives credentials to the listed origin only; any other origin gets * without them', async () => {
    const listed = await preflight(mixed, LISTED, 'DELETE');
    expect(listed.headers['access-control-allow-origin']).toBe(LISTED);
    expect(listed.headers['access-control-allow-credentials']).toBe('true');
    const other = await preflight(mixed, OTHER, 'DELETE');
    expect(other.statusCode).toBe(204);
    expect(other.headers['access-control-allow-origin']).toBe('*');
    expect(other.headers['access-control-allow-credentials']).toBeUndefined();
    expect(list(other.headers.vary)).toContain('origin');
  });
});

describe('corsOptions', () => {
  it('allows every method a route of the app serves', () => {
    const served = new Set<string>();
    for (const match of wildcard.app.printRoutes({ commonPrefix: false }).matchAll(/\(([A-Z, ]+)\)/g)) {
      for (const method of match[1].split(',')) served.add(method.trim());
    }
    served.delete('OPTIONS');
    expect(served.size).toBeGreaterThan(3);
    expect(CORS_METHODS).toEqual(expect.arrayContaining([...served]));
  });

  it('lists each header once', () => {
    for (const headers of [CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS]) {
      expect(new Set(headers.map((h) => h.toLowerCase())).size).toBe(headers.length);
    }
  });

  it('refuses a configured origin that is not scheme://host[:port]', () => {
    for (const bad of ['app.example.org', 'https://app.example.org/path', 'https://user@app.example.org', 'null']) {
      expect(() => corsOptions([bad])).toThrow(/HEARTH_CORS_ORIGINS: ".*" is not an origin/);
    }
    expect(() => corsOptions(['https://App.Example.org/', 'http://localhost:3000', '*'])).not.toThrow();
  });
});
