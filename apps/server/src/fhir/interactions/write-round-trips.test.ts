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
      const text = typeof first === 'string' ? first : String((first as { text?: string }).text ?? '');
      // The job queue's polls and the rate limiter's counter flushes run on the same pool on their
      // own schedule: not the request's statements.
      if (!/pgboss\.|hearth_rate_counter/.test(text)) sent.push(text);
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

async function updatePatient(id: string, family: string, extra: Record<string, unknown> = {}, headers = {}) {
  return t.app.inject({
    method: 'PUT',
    url: `/fhir/R4/Patient/${id}`,
    headers: { ...t.authHeaders, 'content-type': FHIR, ...headers },
    payload: JSON.stringify({
      resourceType: 'Patient',
      id,
      name: [{ family, given: ['Ann'] }],
      gender: 'female',
      birthDate: '1980-02-03',
      identifier: [{ system: 'urn:test:mrn', value: family }],
      ...extra,
    }),
  });
}

async function search(query: string): Promise<string[]> {
  const found = await t.app.inject({ method: 'GET', url: `/fhir/R4/Patient?${query}`, headers: t.authHeaders });
  return ((JSON.parse(found.body) as { entry?: { resource: { id: string } }[] }).entry ?? []).map((e) => e.resource.id);
}

describe('update', () => {
  it('reads once and writes the new version, its history and its changed index rows in one statement', async () => {
    const family = `Upd${Date.now()}`;
    const id = (JSON.parse((await createPatient(family)).body) as { id: string }).id;
    await updatePatient(id, family, { active: true }); // warm
    sent.length = 0;
    const res = await updatePatient(id, `${family}b`, { active: false });
    expect(res.statusCode).toBe(200);
    expect((JSON.parse(res.body) as { meta: { versionId: string } }).meta.versionId).toBe('3');
    const writes = sent.filter((text) => !/^\s*(SELECT|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(text));
    expect(writes).toHaveLength(1);
    expect(sent.filter((text) => /^\s*(BEGIN|COMMIT)\b/i.test(text))).toEqual([]);
    expect(sent).toHaveLength(2);

    // The changed rows were replaced (old name and identifier gone), the unchanged ones kept.
    expect(await search(`family=${family}b`)).toEqual([id]);
    expect(await search(`family:exact=${family}`)).toEqual([]);
    expect(await search(`identifier=urn:test:mrn|${family}b`)).toEqual([id]);
    expect(await search(`identifier=urn:test:mrn|${family}`)).toEqual([]);
    expect(await search(`birthdate=1980-02-03&family=${family}b`)).toEqual([id]);
    expect(await search(`active=false&family=${family}b`)).toEqual([id]);
    const history = await t.app.inject({
      method: 'GET',
      url: `/fhir/R4/Patient/${id}/_history`,
      headers: t.authHeaders,
    });
    const versions = (JSON.parse(history.body) as { entry: { resource: { meta: { versionId: string } } }[] }).entry;
    expect(versions.map((e) => e.resource.meta.versionId)).toEqual(['3', '2', '1']);
  });

  it('answers 412 for a stale If-Match without writing, and keeps working with the current one', async () => {
    const family = `Stale${Date.now()}`;
    const id = (JSON.parse((await createPatient(family)).body) as { id: string }).id;
    expect((await updatePatient(id, family, { active: true }, { 'if-match': 'W/"1"' })).statusCode).toBe(200);
    const stale = await updatePatient(id, `${family}x`, { active: false }, { 'if-match': 'W/"1"' });
    expect(stale.statusCode).toBe(412);
    expect(await search(`family=${family}x`)).toEqual([]);
    expect((await updatePatient(id, family, { active: false }, { 'if-match': 'W/"2"' })).statusCode).toBe(200);
  });

  it('a deleted resource is re-created through the transactional path (version after the deletion)', async () => {
    const family = `Del${Date.now()}`;
    const id = (JSON.parse((await createPatient(family)).body) as { id: string }).id;
    const del = await t.app.inject({ method: 'DELETE', url: `/fhir/R4/Patient/${id}`, headers: t.authHeaders });
    expect(del.statusCode).toBeLessThan(300);
    const res = await updatePatient(id, family);
    expect(res.statusCode).toBe(201);
    expect((JSON.parse(res.body) as { meta: { versionId: string } }).meta.versionId).toBe('3');
    expect(await search(`family=${family}`)).toEqual([id]);
  });
});
