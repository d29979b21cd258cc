// Correctness under concurrency (issue 2), against a real PostgreSQL over real HTTP connections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
let auth: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({ listen: true, config: { databasePoolSize: 30 } });
  auth = (t as { authHeaders?: Record<string, string> }).authHeaders ?? {};
});
afterAll(async () => {
  await t?.close();
});

/** The parts of a response body these tests read. */
interface Body {
  id: string;
  resourceType: string;
  name?: unknown;
  entry: { resource: { meta: { versionId: string } } }[];
  issue: { details: { text: string } }[];
}

async function json(res: Response): Promise<Body> {
  return (await res.json()) as Body;
}

function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.baseUrl}fhir/R4/${path}`, {
    method,
    headers: { ...auth, 'content-type': FHIR, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe('concurrency', () => {
  it('50 concurrent If-Match updates of one version: exactly one wins, the rest get 412, history has no gap', async () => {
    const created = await json(await request('POST', 'Patient', { resourceType: 'Patient', active: true }));
    const id = created.id as string;
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        request(
          'PUT',
          `Patient/${id}`,
          { resourceType: 'Patient', id, name: [{ family: `Writer${i}` }] },
          {
            'if-match': 'W/"1"',
          },
        ),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(49);
    const winner = await json(responses.find((r) => r.status === 200)!);
    for (const r of responses.filter((x) => x.status === 412)) {
      expect((await json(r)).resourceType).toBe('OperationOutcome');
    }

    const history = await json(await request('GET', `Patient/${id}/_history`));
    const versions = history.entry.map((e) => e.resource.meta.versionId);
    expect(versions).toEqual(['2', '1']);
    const current = await json(await request('GET', `Patient/${id}`));
    expect(current.name).toEqual(winner.name);
    const rows = await t.pool.query('SELECT version_id FROM resource_history WHERE id = $1 ORDER BY version_id', [id]);
    expect(rows.rows.map((r: { version_id: number }) => r.version_id)).toEqual([1, 2]);
  });

  it('10 concurrent updates without If-Match all land, one version each, none lost', async () => {
    const created = await json(await request('POST', 'Patient', { resourceType: 'Patient' }));
    const id = created.id as string;
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request('PUT', `Patient/${id}`, { resourceType: 'Patient', id, name: [{ family: `W${i}` }] }),
      ),
    );
    expect(responses.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const rows = await t.pool.query<{ version_id: number }>(
      'SELECT version_id FROM resource_history WHERE id = $1 ORDER BY version_id',
      [id],
    );
    expect(rows.rows.map((r) => r.version_id)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
  });

  it('50 concurrent updates without If-Match take turns: all 200, versions 2..51 each written once, none lost', async () => {
    const created = await json(await request('POST', 'Patient', { resourceType: 'Patient' }));
    const id = created.id as string;
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        request('PUT', `Patient/${id}`, { resourceType: 'Patient', id, name: [{ family: `Turn${i}` }] }),
      ),
    );
    expect(responses.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const answered = await Promise.all(
      responses.map(async (r) => ({ version: Number(r.headers.get('etag')?.replace(/\D/g, '')), body: await json(r) })),
    );
    // Each request got its own version, and the body it was answered with is the one stored as that version.
    expect(answered.map((a) => a.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    const rows = await t.pool.query<{ version_id: number; content: string; last_updated: Date }>(
      'SELECT version_id, content, last_updated FROM resource_history WHERE id = $1 ORDER BY version_id',
      [id],
    );
    expect(rows.rows.map((r) => r.version_id)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    for (const a of answered) {
      expect(JSON.parse(rows.rows[a.version - 1].content).name).toEqual(a.body.name);
    }
    const times = rows.rows.map((r) => r.last_updated.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const current = await json(await request('GET', `Patient/${id}`));
    expect(current.name).toEqual(JSON.parse(rows.rows[50].content).name);
  });

  it('concurrent updates and a delete of one resource serialise: the history is gapless and ends consistently', async () => {
    const created = await json(await request('POST', 'Patient', { resourceType: 'Patient' }));
    const id = created.id as string;
    const responses = await Promise.all([
      ...Array.from({ length: 15 }, (_, i) =>
        request('PUT', `Patient/${id}`, { resourceType: 'Patient', id, name: [{ family: `U${i}` }] }),
      ),
      request('DELETE', `Patient/${id}`),
    ]);
    // An update that lands after the delete re-creates the resource (201).
    expect(responses.map((r) => r.status).filter((s) => s !== 200 && s !== 201 && s !== 204)).toEqual([]);
    const rows = await t.pool.query<{ version_id: number; deleted: boolean }>(
      'SELECT version_id, deleted FROM resource_history WHERE id = $1 ORDER BY version_id',
      [id],
    );
    expect(rows.rows.map((r) => r.version_id)).toEqual(Array.from({ length: 17 }, (_, i) => i + 1));
    expect(rows.rows.filter((r) => r.deleted)).toHaveLength(1);
    const last = rows.rows[rows.rows.length - 1];
    const read = await request('GET', `Patient/${id}`);
    expect(read.status).toBe(last.deleted ? 410 : 200);
  });

  it('20 concurrent identical conditional creates leave exactly one resource', async () => {
    const system = 'http://example.org/concurrency';
    const value = `cc-${Date.now()}`;
    const body = { resourceType: 'Patient', identifier: [{ system, value }] };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        request('POST', 'Patient', body, { 'if-none-exist': `identifier=${system}|${value}` }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.every((s) => s === 200 || s === 201),
      statuses.join(),
    ).toBe(true);
    const ids = new Set(await Promise.all(responses.map(async (r) => (await json(r)).id)));
    const rows = await t.pool.query(
      `SELECT id FROM resource WHERE resource_type = 'Patient' AND deleted = false AND content LIKE $1`,
      [`%${value}%`],
    );
    expect(rows.rowCount).toBe(1);
    expect(ids).toEqual(new Set([rows.rows[0].id]));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  });

  it('a transaction whose last entry fails writes nothing, even with other writers running', async () => {
    const marker = `tx-fail-${Date.now()}`;
    const entries = Array.from({ length: 100 }, (_, i) => ({
      fullUrl: `urn:uuid:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resource: { resourceType: 'Observation', status: 'final', code: { text: marker } },
      request: { method: 'POST', url: 'Observation' },
    }));
    entries.push({
      fullUrl: 'urn:uuid:00000000-0000-4000-8000-999999999999',
      resource: { resourceType: 'Observation', status: 'not-a-status', code: { text: marker } },
      request: { method: 'POST', url: 'Observation' },
    });
    const [tx, ...others] = await Promise.all([
      request('POST', '', { resourceType: 'Bundle', type: 'transaction', entry: entries }),
      ...Array.from({ length: 10 }, () => request('POST', 'Patient', { resourceType: 'Patient' })),
    ]);
    expect(tx.status).toBe(400);
    const outcome = await json(tx);
    expect(outcome.issue[0].details.text).toContain('Bundle.entry[100]');
    expect(others.every((r) => r.status === 201)).toBe(true);
    const rows = await t.pool.query('SELECT count(*)::int AS n FROM resource_history WHERE content LIKE $1', [
      `%${marker}%`,
    ]);
    expect(rows.rows[0].n).toBe(0);
  });
});
