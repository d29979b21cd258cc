// The REST interactions crud.test.ts leaves out (R4 http.html): conditional update and delete over
// HTTP, If-Modified-Since, vread of a deletion, system and _at history, HEAD, DELETE with a
// Content-Type and no body.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';

const FHIR = 'application/fhir+json';
const SYSTEM = 'urn:test:rest';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

function send(method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE', url: string, body?: object, headers = {}) {
  return t.app.inject({
    method,
    url: `/fhir/R4/${url}`,
    headers: { ...t.authHeaders, ...(body ? { 'content-type': FHIR } : {}), ...headers },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

function patientWith(value: string, extra: object = {}) {
  return { resourceType: 'Patient', identifier: [{ system: SYSTEM, value }], ...extra };
}

const unique = () => `v-${randomBytes(5).toString('hex')}`;

describe('conditional update (PUT [type]?query)', () => {
  it('creates when nothing matches, updates the one match, and answers 412 to several', async () => {
    const value = unique();
    const created = await send('PUT', `Patient?identifier=${SYSTEM}|${value}`, patientWith(value, { active: true }));
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    expect(created.headers.location).toBe(`http://localhost:8103/fhir/R4/Patient/${id}/_history/1`);

    const updated = await send('PUT', `Patient?identifier=${SYSTEM}|${value}`, patientWith(value, { active: false }));
    expect(updated.statusCode).toBe(200);
    expect(updated.json().id).toBe(id);
    expect(updated.json().meta.versionId).toBe('2');
    expect(updated.headers.etag).toBe('W/"2"');

    // The body's id must be the match's when given.
    const mismatch = await send('PUT', `Patient?identifier=${SYSTEM}|${value}`, { ...patientWith(value), id: 'other' });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().resourceType).toBe('OperationOutcome');

    await send('POST', 'Patient', patientWith(value));
    const ambiguous = await send('PUT', `Patient?identifier=${SYSTEM}|${value}`, patientWith(value));
    expect(ambiguous.statusCode).toBe(412);
    expect(ambiguous.json().resourceType).toBe('OperationOutcome');
  });

  it('needs search parameters', async () => {
    const res = await send('PUT', 'Patient', patientWith(unique()));
    expect([400, 405]).toContain(res.statusCode);
    expect(res.json().resourceType).toBe('OperationOutcome');
  });
});

describe('conditional delete (DELETE [type]?query)', () => {
  it('deletes every match, and succeeds when nothing matches', async () => {
    const value = unique();
    const a = (await send('POST', 'Patient', patientWith(value))).json().id as string;
    const b = (await send('POST', 'Patient', patientWith(value))).json().id as string;
    const keep = (await send('POST', 'Patient', patientWith(unique()))).json().id as string;

    const res = await send('DELETE', `Patient?identifier=${SYSTEM}|${value}`);
    expect(res.statusCode).toBe(204);
    expect((await send('GET', `Patient/${a}`)).statusCode).toBe(410);
    expect((await send('GET', `Patient/${b}`)).statusCode).toBe(410);
    expect((await send('GET', `Patient/${keep}`)).statusCode).toBe(200);

    const none = await send('DELETE', `Patient?identifier=${SYSTEM}|${unique()}`);
    expect(none.statusCode).toBe(204);
  });

  it('refuses a condition without parameters and an unknown parameter with an OperationOutcome', async () => {
    const bare = await send('DELETE', 'Patient');
    expect(bare.statusCode).toBeGreaterThanOrEqual(400);
    expect(bare.statusCode).toBeLessThan(500);
    const unknown = await send('DELETE', 'Patient?no-such-param=1');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().resourceType).toBe('OperationOutcome');
  });
});

describe('conditional create (If-None-Exist)', () => {
  it('answers 200 with the one match, 412 with several', async () => {
    const value = unique();
    const first = await send('POST', 'Patient', patientWith(value), {
      'if-none-exist': `identifier=${SYSTEM}|${value}`,
    });
    expect(first.statusCode).toBe(201);
    const again = await send('POST', 'Patient', patientWith(value), {
      'if-none-exist': `identifier=${SYSTEM}|${value}`,
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    await send('POST', 'Patient', patientWith(value));
    const several = await send('POST', 'Patient', patientWith(value), {
      'if-none-exist': `identifier=${SYSTEM}|${value}`,
    });
    expect(several.statusCode).toBe(412);
  });
});

describe('reads and headers', () => {
  it('answers 304 to If-Modified-Since at or after Last-Modified, 200 before it', async () => {
    const created = await send('POST', 'Patient', patientWith(unique()));
    const lastModified = String(created.headers['last-modified']);
    const same = await send('GET', `Patient/${created.json().id}`, undefined, { 'if-modified-since': lastModified });
    expect(same.statusCode).toBe(304);
    expect(same.body).toBe('');
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    const changed = await send('GET', `Patient/${created.json().id}`, undefined, { 'if-modified-since': earlier });
    expect(changed.statusCode).toBe(200);
  });

  it('HEAD answers the headers of a read without a body', async () => {
    const created = await send('POST', 'Patient', patientWith(unique()));
    const head = await send('HEAD', `Patient/${created.json().id}`);
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe('W/"1"');
    expect(head.body).toBe('');
  });

  it('vread: 410 for a deletion, 404 for a version that never existed', async () => {
    const id = (await send('POST', 'Patient', patientWith(unique()))).json().id as string;
    // Clients often send Content-Type on every request: a DELETE without a body is still a delete.
    const del = await send('DELETE', `Patient/${id}`, undefined, { 'content-type': FHIR });
    expect(del.statusCode).toBe(204);
    const v1 = await send('GET', `Patient/${id}/_history/1`);
    expect(v1.statusCode).toBe(200);
    expect(v1.headers.etag).toBe('W/"1"');
    expect((await send('GET', `Patient/${id}/_history/2`)).statusCode).toBe(410);
    const never = await send('GET', `Patient/${id}/_history/9`);
    expect(never.statusCode).toBe(404);
    expect(never.json().resourceType).toBe('OperationOutcome');
    // Deleting again succeeds and writes nothing.
    expect((await send('DELETE', `Patient/${id}`)).statusCode).toBe(204);
    const history = (await send('GET', `Patient/${id}/_history`)).json();
    expect(history.entry).toHaveLength(2);
  });

  it('history of an id that never existed is a 404', async () => {
    const res = await send('GET', 'Patient/never-existed/_history');
    expect(res.statusCode).toBe(404);
    expect(res.json().resourceType).toBe('OperationOutcome');
  });
});

describe('system history and _at', () => {
  it('system history lists writes of every type, newest first', async () => {
    const patient = (await send('POST', 'Patient', patientWith(unique()))).json().id as string;
    const device = (await send('POST', 'Device', { resourceType: 'Device' })).json().id as string;
    const page = (await send('GET', '_history?_count=5')).json();
    expect(page.type).toBe('history');
    const urls = page.entry.map((e: { fullUrl: string }) => e.fullUrl);
    expect(urls.slice(0, 2)).toEqual([
      `http://localhost:8103/fhir/R4/Device/${device}`,
      `http://localhost:8103/fhir/R4/Patient/${patient}`,
    ]);
  });

  it('_at gives the version current at an instant', async () => {
    const id = (await send('POST', 'Patient', patientWith(unique(), { active: true }))).json().id as string;
    await new Promise((r) => setTimeout(r, 20));
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await send('PUT', `Patient/${id}`, { ...patientWith(unique()), id, active: false });
    const page = (await send('GET', `Patient/${id}/_history?_at=${encodeURIComponent(between)}`)).json();
    const versions = page.entry.map((e: { resource: { meta: { versionId: string } } }) => e.resource.meta.versionId);
    expect(versions).toContain('1');
    expect(versions).not.toContain('2');
  });
});

describe('search index upkeep on update', () => {
  it('rewrites only the kinds of rows that changed, and search sees old values gone and new ones found', async () => {
    const value = unique();
    const family = `Fam${randomBytes(4).toString('hex')}`;
    const created = await send('POST', 'Patient', patientWith(value, { active: true, name: [{ family }] }));
    const id = created.json().id as string;
    const stringRows = () =>
      t.pool.query<{ ctid: string }>(`SELECT ctid::text FROM search_string WHERE resource_id = $1 ORDER BY ctid`, [id]);
    const before = (await stringRows()).rows.map((r) => r.ctid);
    expect(before.length).toBeGreaterThan(0);

    // Only a token changes: the string rows stay where they are; the token rows are replaced.
    const flipped = await send('PUT', `Patient/${id}`, {
      ...patientWith(value, { active: false, name: [{ family }] }),
      id,
    });
    expect(flipped.statusCode).toBe(200);
    expect((await stringRows()).rows.map((r) => r.ctid)).toEqual(before);
    const search = async (query: string) =>
      (await send('GET', `Patient?${query}`)).json().entry?.map((e: { resource: { id: string } }) => e.resource.id) ??
      [];
    expect(await search(`identifier=${SYSTEM}|${value}&active=false`)).toEqual([id]);
    expect(await search(`identifier=${SYSTEM}|${value}&active=true`)).toEqual([]);
    expect(await search(`family=${family}`)).toEqual([id]);

    // Now the name changes: the old family is no longer found, the new one is.
    const renamed = `${family}x`;
    await send('PUT', `Patient/${id}`, { ...patientWith(value, { active: false, name: [{ family: renamed }] }), id });
    expect(await search(`family:exact=${family}`)).toEqual([]);
    expect(await search(`family:exact=${renamed}`)).toEqual([id]);
    expect(await search(`identifier=${SYSTEM}|${value}&active=false`)).toEqual([id]);

    // Only one address line changes: one string row is rewritten, the others stay where they are.
    const withAddress = (line: string) => ({
      ...patientWith(value, { active: false, name: [{ family: renamed, given: ['Ann', 'Bea'] }] }),
      address: [{ line: [line], city: 'Providence', postalCode: '02903' }],
      id,
    });
    await send('PUT', `Patient/${id}`, withAddress('1 Elm Street'));
    const rowsBefore = await t.pool.query<{ ctid: string; value: string }>(
      `SELECT ctid::text, value FROM search_string WHERE resource_id = $1`,
      [id],
    );
    await send('PUT', `Patient/${id}`, withAddress('2 Oak Road'));
    const rowsAfter = await t.pool.query<{ ctid: string; value: string }>(
      `SELECT ctid::text, value FROM search_string WHERE resource_id = $1`,
      [id],
    );
    const moved = rowsAfter.rows.filter((r) => !rowsBefore.rows.some((b) => b.ctid === r.ctid)).map((r) => r.value);
    expect(moved).toEqual(['2 oak road']);
    expect(await search(`address=2 Oak`)).toEqual([id]);
    expect(await search(`address=1 Elm`)).toEqual([]);

    // A delete removes every row.
    await send('DELETE', `Patient/${id}`);
    const left = await t.pool.query(
      `SELECT 1 FROM search_token WHERE resource_id = $1 UNION ALL SELECT 1 FROM search_string WHERE resource_id = $1`,
      [id],
    );
    expect(left.rowCount).toBe(0);
  });
});

describe('search index rows after a series of updates', () => {
  /** A resource's index rows as stored, in a stable order, without their resource id. */
  async function storedRows(id: string): Promise<string[]> {
    const out: string[] = [];
    for (const table of ['search_string', 'search_token', 'search_date', 'search_reference']) {
      const { rows } = await t.pool.query<Record<string, unknown>>(`SELECT * FROM ${table} WHERE resource_id = $1`, [
        id,
      ]);
      for (const row of rows) {
        const { resource_id: _, ...rest } = row;
        out.push(`${table} ${JSON.stringify(rest)}`);
      }
    }
    return out.sort();
  }

  it('equal those a create of the last version writes (copies, reordering, removals, sort marks)', async () => {
    const value = unique();
    const phone = (...values: string[]) => values.map((v) => ({ system: 'phone', value: v }));
    const versions = [
      {
        name: [{ family: 'Ng', given: ['Ann', 'Ann', 'Ann'] }],
        birthDate: '1970-01-01',
        telecom: phone('1', '1', '1'),
      },
      { name: [{ family: 'Ng', given: ['Ann', 'Ann'] }], birthDate: '1970-01-01', telecom: phone('1', '1') },
      { name: [{ family: 'Ng', given: ['Bea', 'Ann', 'Ann'] }], telecom: phone('2', '1', '2') },
      {
        name: [{ given: ['Ann', 'Bea'] }, { family: 'Ng' }],
        birthDate: '1980-05-05',
        telecom: phone('2'),
        generalPractitioner: [{ reference: 'Practitioner/p1' }],
      },
      { name: [{ family: 'Ng', given: ['Ann'] }], birthDate: '1980-05-05', telecom: phone('2', '2') },
    ];
    const created = await send('POST', 'Patient', patientWith(value, versions[0]));
    const id = created.json().id as string;
    // The only difference is meta.lastUpdated (indexed as _lastUpdated): leave it out.
    const withoutLastUpdated = (rows: string[]) => rows.filter((r) => !r.includes('"code":"_lastUpdated"'));
    for (const v of versions.slice(1)) {
      expect((await send('PUT', `Patient/${id}`, { ...patientWith(value, v), id })).statusCode).toBe(200);
      const fresh = (await send('POST', 'Patient', patientWith(value, v))).json().id as string;
      expect(withoutLastUpdated(await storedRows(id))).toEqual(withoutLastUpdated(await storedRows(fresh)));
    }
  });
});
