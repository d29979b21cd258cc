import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
/** Statements that reached a database connection (each one a round trip), with their text. */
const sent: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  // Every client the pool hands out (to Pool.query or to connect()) reports what it sends.
  const wrapped = new WeakSet<object>();
  t.pool.on('acquire', (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      sent.push(typeof first === 'string' ? first : String((first as { text?: string }).text ?? ''));
      return query(...args);
    };
  });
});
afterAll(async () => {
  await t?.close();
});

async function createPatient(family: string) {
  return t.app.inject({
    method: 'POST',
    url: '/fhir/R4/Patient',
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify({
      resourceType: 'Patient',
      name: [{ family, given: ['Ann'] }],
      gender: 'female',
      birthDate: '1980-02-03',
      identifier: [{ system: 'urn:test:mrn', value: family }],
    }),
  });
}

describe('create', () => {
  it('writes the resource, its history and its index rows in one statement, searchable at once', async () => {
    await createPatient('Warmup'); // caches (search parameters, access) filled
    const family = `RoundTrip${Date.now()}`;
    sent.length = 0;
    const res = await createPatient(family);
    expect(res.statusCode).toBe(201);
    const writes = sent.filter((text) => !/^\s*(SELECT|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(text));
    expect(writes.map((text) => text.slice(0, 60))).toHaveLength(1);
    expect(sent.filter((text) => /^\s*(BEGIN|COMMIT)\b/i.test(text))).toEqual([]);
    const id = (JSON.parse(res.body) as { id: string }).id;

    const read = await t.app.inject({ method: 'GET', url: `/fhir/R4/Patient/${id}`, headers: t.authHeaders });
    expect(read.statusCode).toBe(200);
    const history = await t.app.inject({
      method: 'GET',
      url: `/fhir/R4/Patient/${id}/_history`,
      headers: t.authHeaders,
    });
    expect((JSON.parse(history.body) as { total?: number; entry: unknown[] }).entry).toHaveLength(1);
    // Token, string and date index rows were written with it.
    for (const query of [
      `family=${family}`,
      `identifier=urn:test:mrn|${family}`,
      `birthdate=1980-02-03&family=${family}`,
    ]) {
      const found = await t.app.inject({ method: 'GET', url: `/fhir/R4/Patient?${query}`, headers: t.authHeaders });
      const ids = ((JSON.parse(found.body) as { entry?: { resource: { id: string } }[] }).entry ?? []).map(
        (e) => e.resource.id,
      );
      expect(ids, query).toEqual([id]);
    }
  });
});
