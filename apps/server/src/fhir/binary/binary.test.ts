import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { waitFor } from '../../bots/testing.js';
import { BINARY_STORAGE_EXTENSION } from '../../storage/binary-key.js';

const FHIR = 'application/fhir+json';
let t: TestApp;

async function upload(body: Buffer, contentType: string, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/fhir/R4/Binary',
    headers: { ...t.authHeaders, 'content-type': contentType, ...headers },
    payload: body,
  });
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => join(d.parentPath, d.name));
  } catch {
    return [];
  }
}

/** How many pieces of content the store holds: rows in PostgreSQL, or files under the data directory. */
async function storedContents(): Promise<number> {
  if (t.config.binaryStorage === 'files') {
    return filesUnder(join(t.config.dataDir, 'binary')).length;
  }
  const { rows } = await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM binary_content');
  return rows[0].n;
}

// Every behaviour holds whichever store keeps the content.
describe.each(['postgres', 'files'])('Binary (%s storage)', (binaryStorage) => {
  beforeAll(async () => {
    t = await createTestApp({ listen: true, config: { maxBinaryBytes: 8 * 1024 * 1024, binaryStorage } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores any content type and serves the same bytes back with that type', async () => {
    const bytes = randomBytes(100_000);
    const res = await upload(bytes, 'image/png');
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.resourceType).toBe('Binary');
    expect(created.contentType).toBe('image/png');
    expect(created.data).toBeUndefined();
    expect(res.headers.location).toContain(`/Binary/${created.id}/_history/1`);

    for (const accept of [undefined, 'image/png', '*/*', 'image/*']) {
      const read = await t.app.inject({
        url: `/fhir/R4/Binary/${created.id}`,
        headers: { ...t.authHeaders, ...(accept ? { accept } : {}) },
      });
      expect(read.statusCode, String(accept)).toBe(200);
      expect(read.headers['content-type']).toBe('image/png');
      expect(read.headers['x-content-type-options']).toBe('nosniff');
      expect(read.rawPayload.equals(bytes)).toBe(true);
    }
  });

  it('answers the Binary resource with base64 data to Accept: application/fhir+json', async () => {
    const bytes = randomBytes(7001); // not a multiple of 3: the streamed base64 must pad correctly
    const { id } = (await upload(bytes, 'application/pdf')).json();
    for (const headers of [{ accept: FHIR }, { accept: 'application/fhir+json, */*;q=0.1' }]) {
      const read = await t.app.inject({ url: `/fhir/R4/Binary/${id}`, headers: { ...t.authHeaders, ...headers } });
      expect(read.headers['content-type']).toContain('application/fhir+json');
      const body = read.json();
      expect(body).toMatchObject({ resourceType: 'Binary', id, contentType: 'application/pdf' });
      expect(Buffer.from(body.data, 'base64').equals(bytes)).toBe(true);
      expect(JSON.stringify(body.meta ?? {})).not.toContain(BINARY_STORAGE_EXTENSION);
    }
    const viaFormat = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Binary/${id}?_format=json` });
    expect(viaFormat.json().resourceType).toBe('Binary');
  });

  it('accepts a Binary resource with base64 data and keeps the data out of the JSON tables', async () => {
    const text = 'plain text content '.repeat(100);
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Binary',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({
        resourceType: 'Binary',
        contentType: 'text/plain',
        securityContext: { reference: 'Patient/123' },
        data: Buffer.from(text).toString('base64'),
      }),
    });
    expect(res.statusCode).toBe(201);
    const { id } = res.json();
    const raw = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Binary/${id}` });
    expect(raw.body).toBe(text);
    expect(raw.headers['content-type']).toBe('text/plain');
    expect(raw.headers['x-security-context']).toBe('Patient/123');
    const row = await t.pool.query<{ content: string }>(
      'SELECT content FROM resource WHERE resource_type = $1 AND id = $2',
      ['Binary', id],
    );
    expect(row.rows[0].content).not.toContain(Buffer.from(text).toString('base64').slice(0, 40));
    expect(JSON.parse(row.rows[0].content).securityContext).toEqual({ reference: 'Patient/123' });
    expect(await storedContents()).toBeGreaterThan(0);
  });

  it('keeps the X-Security-Context header of a raw upload', async () => {
    const res = await upload(Buffer.from('{"a":1}'), 'application/json', { 'x-security-context': 'Patient/42' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.securityContext).toEqual({ reference: 'Patient/42' });
    expect(body.contentType).toBe('application/json');
    const raw = await t.app.inject({
      url: `/fhir/R4/Binary/${body.id}`,
      headers: { ...t.authHeaders, accept: 'application/json' },
    });
    expect(raw.body).toBe('{"a":1}');
  });

  it('updates with PUT; every version keeps its own content', async () => {
    const { id } = (await upload(Buffer.from('version one'), 'text/plain')).json();
    const put = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Binary/${id}`,
      headers: { ...t.authHeaders, 'content-type': 'text/plain', 'if-match': 'W/"1"' },
      payload: 'version two',
    });
    expect(put.statusCode).toBe(200);
    expect(put.headers.etag).toBe('W/"2"');
    expect((await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Binary/${id}` })).body).toBe('version two');
    expect((await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Binary/${id}/_history/1` })).body).toBe(
      'version one',
    );
    const stale = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Binary/${id}`,
      headers: { ...t.authHeaders, 'content-type': 'text/plain', 'if-match': 'W/"1"' },
      payload: 'lost',
    });
    expect(stale.statusCode).toBe(412);
    const notModified = await t.app.inject({
      url: `/fhir/R4/Binary/${id}`,
      headers: { ...t.authHeaders, 'if-none-match': 'W/"2"' },
    });
    expect(notModified.statusCode).toBe(304);
  });

  it('creates with a client id through PUT, and deletes', async () => {
    const put = await t.app.inject({
      method: 'PUT',
      url: '/fhir/R4/Binary/client-binary-1',
      headers: { ...t.authHeaders, 'content-type': 'application/octet-stream' },
      payload: Buffer.from([0, 1, 2, 3]),
    });
    expect(put.statusCode).toBe(201);
    expect(
      (await t.app.inject({ headers: t.authHeaders, method: 'DELETE', url: '/fhir/R4/Binary/client-binary-1' }))
        .statusCode,
    ).toBe(204);
    const gone = await t.app.inject({ headers: t.authHeaders, url: '/fhir/R4/Binary/client-binary-1' });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().resourceType).toBe('OperationOutcome');
  });

  it('never trusts a storage key sent by a client', async () => {
    const secret = await upload(Buffer.from('someone else'), 'text/plain');
    const stored = await t.pool.query<{ content: string }>(
      'SELECT content FROM resource WHERE resource_type = $1 AND id = $2',
      ['Binary', secret.json().id],
    );
    const key = JSON.parse(stored.rows[0].content).meta.extension[0].valueString as string;
    const forged = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Binary',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({
        resourceType: 'Binary',
        contentType: 'text/plain',
        meta: { extension: [{ url: BINARY_STORAGE_EXTENSION, valueString: key }] },
      }),
    });
    expect(forged.statusCode).toBe(201);
    const read = await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/Binary/${forged.json().id}` });
    expect(read.body).toBe('');
  });

  it('answers 413 above the size limit and leaves no content behind', async () => {
    const before = await storedContents();
    const declared = await upload(randomBytes(9 * 1024 * 1024), 'application/octet-stream');
    expect(declared.statusCode).toBe(413);
    expect(declared.json().resourceType).toBe('OperationOutcome');
    const json = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Binary',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({ resourceType: 'Binary', contentType: 'text/plain', data: 'not base64!' }),
    });
    expect(json.statusCode).toBe(400);
    expect(json.json().issue[0].expression).toEqual(['Binary.data']);
    expect(await storedContents()).toBe(before);
  });

  it('streams a large upload and download over a real connection', async () => {
    const size = 6 * 1024 * 1024;
    const bytes = randomBytes(size);
    // A chunked request body (no Content-Length): the limit is enforced while streaming.
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < size; i += 64 * 1024) {
          controller.enqueue(bytes.subarray(i, i + 64 * 1024));
        }
        controller.close();
      },
    });
    const res = await fetch(`${t.baseUrl}fhir/R4/Binary`, {
      method: 'POST',
      headers: { ...t.authHeaders, 'content-type': 'video/mp4' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const down = await fetch(`${t.baseUrl}fhir/R4/Binary/${id}`, { headers: t.authHeaders });
    expect(down.headers.get('content-length')).toBe(String(size));
    expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);

    const before = await storedContents();
    const tooBig = await fetch(`${t.baseUrl}fhir/R4/Binary`, {
      method: 'POST',
      headers: { ...t.authHeaders, 'content-type': 'video/mp4' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 9; i++) {
            controller.enqueue(randomBytes(1024 * 1024));
          }
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit).catch((err: unknown) => err);
    // The server may answer 413 and close before the client has sent everything; either way no 2xx.
    if (tooBig instanceof Response) {
      expect(tooBig.status).toBe(413);
    }
    // What was stored of it before the limit was passed is gone again.
    await waitFor(async () => (await storedContents()) === before || undefined);
    expect(await storedContents()).toBe(before);
  });
});
