// The bounds on expensive requests (issue 2): statement timeout, _count, bundle size, JSON depth, body size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorToOutcome } from '../errors/to-outcome.js';
import { createTestApp, type TestApp } from '../test/app.js';

let t: TestApp;
let auth: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({
    config: { databaseStatementTimeoutMs: 4321, maxBundleEntries: 3, maxJsonDepth: 10, maxBodyBytes: 64 * 1024 },
  });
  auth = (t as { authHeaders?: Record<string, string> }).authHeaders ?? {};
});
afterAll(async () => {
  await t?.close();
});

const post = (url: string, payload: string) =>
  t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/fhir+json' }, payload });

describe('limits', () => {
  it('runs every query under the configured statement timeout, and a timeout is a 503 OperationOutcome', async () => {
    const { rows } = await t.pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
    expect(rows[0].statement_timeout).toBe('4321ms');
    const err = await t.pool.query('SET LOCAL statement_timeout = 1; SELECT pg_sleep(1)').catch((e: unknown) => e);
    const mapped = errorToOutcome(err);
    expect(mapped.status).toBe(503);
    expect(mapped.outcome.resourceType).toBe('OperationOutcome');
    expect(mapped.unexpected).toBe(false);
  });

  it('caps the entries of a Bundle', async () => {
    const entry = { resource: { resourceType: 'Patient' }, request: { method: 'POST', url: 'Patient' } };
    const res = await post(
      '/fhir/R4',
      JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: [entry, entry, entry, entry] }),
    );
    expect(res.statusCode).toBe(413);
    expect(res.json().issue[0].details.text).toContain('at most 3');
  });

  it('caps JSON nesting depth and body size', async () => {
    const deep = await post(
      '/fhir/R4/Patient',
      '{"resourceType":"Patient","extension":' + '['.repeat(20) + ']'.repeat(20) + '}',
    );
    expect(deep.statusCode).toBe(400);
    expect(deep.json().issue[0].details.text).toContain('deeper than 10');
    const big = await post('/fhir/R4/Patient', JSON.stringify({ resourceType: 'Patient', id: 'x'.repeat(70 * 1024) }));
    expect(big.statusCode).toBe(413);
    expect(big.json().resourceType).toBe('OperationOutcome');
  });

  it('accepts an oversized _count on history (pages hold at most 1000) and rejects a negative one', async () => {
    const res = await t.app.inject({ url: '/fhir/R4/Patient/_history?_count=100000', headers: auth });
    expect(res.statusCode).toBe(200);
    const self = res.json().link.find((l: { relation: string }) => l.relation === 'self');
    expect(self.url).toContain('_count=100000');
    const bad = await t.app.inject({ url: '/fhir/R4/Patient/_history?_count=-1', headers: auth });
    expect(bad.statusCode).toBe(400);
  });
});
