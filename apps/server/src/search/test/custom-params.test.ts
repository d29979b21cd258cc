import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { createTestProject, type TestProject } from '../../test/auth.js';
import { SearchEngine } from '../engine.js';
import { REINDEX_QUEUE } from '../index/background.js';
import { FHIR, ids } from './helpers.js';

let t: TestApp;
let other: TestProject;

async function post(resource: object, headers: Record<string, string>) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${(resource as { resourceType: string }).resourceType}`,
    headers: { 'content-type': FHIR, ...headers },
    payload: JSON.stringify(resource),
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json() as { id: string };
}
async function get(url: string, headers: Record<string, string>) {
  const res = await t.app.inject({ url: `/fhir/R4/${url}`, headers });
  return { status: res.statusCode, body: res.json() };
}

interface CapabilityEntry {
  searchParam: { name: string }[];
  searchInclude?: string[];
  searchRevInclude?: string[];
}

/** A type's entry in GET /metadata, as the caller's project sees it. */
async function capabilityOf(type: string, headers: Record<string, string>): Promise<CapabilityEntry> {
  const cs = (await get('metadata', headers)).body as { rest: { resource: (CapabilityEntry & { type: string })[] }[] };
  return cs.rest[0].resource.find((r) => r.type === type)!;
}

/** Retries `read` until it returns a non-empty list (a background job's effect); at most ~20 s. */
async function eventually(read: () => Promise<string[]>): Promise<string[]> {
  for (let i = 0; ; i++) {
    const value = await read();
    if (value.length > 0 || i >= 200) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const NICKNAME = 'http://example.org/fhir/StructureDefinition/nickname';

beforeAll(async () => {
  t = await createTestApp();
  other = await createTestProject(t.app, t.services, 'Other project');
});
afterAll(async () => {
  await t?.close();
});

describe('custom SearchParameter resources', () => {
  it('become searchable in their project after a reindex, and only there', async () => {
    const bob = await post(
      { resourceType: 'Patient', extension: [{ url: NICKNAME, valueString: 'Bobby' }] },
      t.authHeaders,
    );
    await post({ resourceType: 'Patient', extension: [{ url: NICKNAME, valueString: 'Bobby' }] }, other.headers);
    // Unknown before: ignored with a warning.
    const before = await get('Patient?nickname=bob', t.authHeaders);
    expect(JSON.stringify(before.body)).toContain('nickname');
    await post(
      {
        resourceType: 'SearchParameter',
        url: 'http://example.org/fhir/SearchParameter/Patient-nickname',
        name: 'nickname',
        status: 'active',
        description: 'A nickname',
        code: 'nickname',
        base: ['Patient'],
        type: 'string',
        expression: `Patient.extension('${NICKNAME}').value`,
      },
      t.authHeaders,
    );
    // New resources are indexed with it on write, at once.
    const carl = await post(
      { resourceType: 'Patient', extension: [{ url: NICKNAME, valueString: 'Charlie' }] },
      t.authHeaders,
    );
    expect(ids((await get('Patient?nickname=char', t.authHeaders)).body)).toEqual([carl.id]);
    // Existing resources are reindexed by a background job, after the SearchParameter's commit.
    const found = await eventually(async () => ids((await get('Patient?nickname=bob', t.authHeaders)).body));
    expect(found).toEqual([bob.id]);
    const jobs = await t.pool.query<{ state: string; data: { types: string[] } }>(
      `SELECT state, data FROM pgboss.job WHERE name = $1 AND data->>'projectId' = $2`,
      [REINDEX_QUEUE, t.testProject.projectId],
    );
    expect(jobs.rows.map((r) => r.data.types)).toEqual([['Patient']]);
    // While a reindex for the project's parameters runs, a search on one of them says so.
    const engine = new SearchEngine({ pool: t.pool, registry: t.services.search.registry, reindexing: () => true });
    const during = await engine.search(t.services.systemRepo(t.testProject.projectId), {
      resourceType: 'Patient',
      params: new URLSearchParams('nickname=bob&gender=male'),
      fhirBase: 'http://localhost/fhir/R4/',
      strict: true,
    });
    expect(during).toContain('results on \\"nickname\\" may be incomplete');
    expect(during).not.toContain('\\"gender\\" may be');
    // Another project does not have it.
    const strict = await get('Patient?nickname=bob', { ...other.headers, prefer: 'handling=strict' });
    expect(strict.status).toBe(400);
    // The metadata lists it for the project.
    const params = await t.services.search.searchParamsFor('Patient', t.testProject.projectId);
    expect(params.find((p) => p.name === 'nickname')?.definition).toBe(
      'http://example.org/fhir/SearchParameter/Patient-nickname',
    );
    const base = await t.services.search.searchParamsFor('Patient');
    expect(base.find((p) => p.name === 'nickname')).toBeUndefined();
    expect(base.find((p) => p.name === 'birthdate')?.type).toBe('date');
    // GET /metadata: the project's CapabilityStatement lists it, another project's does not.
    const listed = async (headers: Record<string, string>) =>
      (await capabilityOf('Patient', headers)).searchParam.map((p) => p.name);
    expect(await listed(t.authHeaders)).toContain('nickname');
    expect(await listed(other.headers)).not.toContain('nickname');
    expect(await listed(other.headers)).toContain('birthdate');
  });

  it('of type reference: searchable, included, and listed with _include / _revinclude in /metadata', async () => {
    const REVIEWER = 'http://example.org/fhir/StructureDefinition/reviewer';
    await post(
      {
        resourceType: 'SearchParameter',
        url: 'http://example.org/fhir/SearchParameter/Observation-reviewer',
        name: 'reviewer',
        status: 'active',
        description: 'Who reviewed it',
        code: 'reviewer',
        base: ['Observation'],
        type: 'reference',
        target: ['Practitioner'],
        expression: `Observation.extension('${REVIEWER}').value`,
      },
      t.authHeaders,
    );
    const doc = await post({ resourceType: 'Practitioner', name: [{ family: 'Reviewing' }] }, t.authHeaders);
    const obs = await post(
      {
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'reviewed' },
        extension: [{ url: REVIEWER, valueReference: { reference: `Practitioner/${doc.id}` } }],
      },
      t.authHeaders,
    );
    expect(ids((await get(`Observation?reviewer=Practitioner/${doc.id}`, t.authHeaders)).body)).toEqual([obs.id]);
    expect(ids((await get('Observation?reviewer.name=reviewing', t.authHeaders)).body)).toEqual([obs.id]);
    const withObs = (await get(`Practitioner?_id=${doc.id}&_revinclude=Observation:reviewer`, t.authHeaders)).body as {
      entry: { resource: { id: string } }[];
    };
    expect(withObs.entry.map((e) => e.resource.id).sort()).toEqual([doc.id, obs.id].sort());

    const practitioner = await capabilityOf('Practitioner', t.authHeaders);
    expect(practitioner.searchRevInclude).toContain('Observation:reviewer');
    expect(practitioner.searchRevInclude).toContain('Observation:performer');
    expect((await capabilityOf('Observation', t.authHeaders)).searchInclude).toContain('Observation:reviewer');
    expect((await capabilityOf('Practitioner', other.headers)).searchRevInclude).not.toContain('Observation:reviewer');
    // Only parameters that may point at the type: Observation:subject may, Observation:performer may not.
    const patient = await capabilityOf('Patient', other.headers);
    expect(patient.searchRevInclude).toContain('Observation:subject');
    expect(patient.searchRevInclude).toContain('Encounter:patient');
    expect(patient.searchRevInclude).not.toContain('Observation:encounter');
    expect(patient.searchInclude).toContain('Patient:general-practitioner');
  });

  it('on an extension of a number type, sortable', async () => {
    const RANK = 'http://example.org/fhir/StructureDefinition/rank';
    await post(
      {
        resourceType: 'SearchParameter',
        url: 'http://example.org/fhir/SearchParameter/Observation-rank',
        name: 'rank',
        status: 'active',
        description: 'A rank',
        code: 'rank',
        base: ['Observation'],
        type: 'number',
        expression: `Observation.extension('${RANK}').value`,
      },
      t.authHeaders,
    );
    const made = [];
    for (const rank of [3, 1, 2]) {
      made.push(
        await post(
          {
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'x' },
            extension: [{ url: RANK, valueInteger: rank }],
          },
          t.authHeaders,
        ),
      );
    }
    const sorted = await get('Observation?rank=ge1&_sort=-rank', t.authHeaders);
    expect(ids(sorted.body)).toEqual([made[0].id, made[2].id, made[1].id]);
  });

  it('reindex rebuilds lost index rows', async () => {
    // The background reindexes queued by earlier tests' SearchParameters end first: one still
    // running would write this Patient's rows back on its own (seen once under a loaded full run).
    const unfinished = async () =>
      (
        await t.pool.query<{ id: string }>(
          `SELECT id FROM pgboss.job WHERE name = $1 AND data->>'projectId' = $2 AND state NOT IN ('completed', 'cancelled', 'failed')`,
          [REINDEX_QUEUE, t.testProject.projectId],
        )
      ).rows.map((r) => r.id);
    for (let i = 0; i < 300 && (await unfinished()).length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await unfinished()).toEqual([]);
    const p = await post({ resourceType: 'Patient', name: [{ family: 'Reindexed' }] }, t.authHeaders);
    await t.pool.query('DELETE FROM search_string WHERE resource_id = $1', [p.id]);
    expect(ids((await get('Patient?name=reindexed', t.authHeaders)).body)).toEqual([]);
    const count = await t.services.search.reindex(['Patient'], t.testProject.projectId);
    expect(count).toBeGreaterThan(0);
    expect(ids((await get('Patient?name=reindexed', t.authHeaders)).body)).toEqual([p.id]);
  });

  it("never shows another project's resources, directly or through references", async () => {
    const theirs = await post({ resourceType: 'Patient', name: [{ family: 'Tenantless' }] }, other.headers);
    await post(
      {
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'x' },
        subject: { reference: `Patient/${theirs.id}` },
      },
      other.headers,
    );
    const mine = await post(
      {
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'mine' },
        subject: { reference: `Patient/${theirs.id}` },
      },
      t.authHeaders,
    );
    expect(ids((await get('Patient?name=tenantless', t.authHeaders)).body)).toEqual([]);
    expect(ids((await get(`Patient?_id=${theirs.id}`, t.authHeaders)).body)).toEqual([]);
    expect(ids((await get('Observation?subject.name=tenantless', t.authHeaders)).body)).toEqual([]);
    expect(ids((await get(`Patient?_has:Observation:subject:code:text=x`, t.authHeaders)).body)).toEqual([]);
    const included = (await get(`Observation?_id=${mine.id}&_include=Observation:subject`, t.authHeaders)).body as {
      entry?: { search: { mode: string } }[];
    };
    expect(included.entry?.filter((e) => e.search.mode === 'include')).toEqual([]);
    expect(ids((await get(`Patient?_id=${theirs.id}`, other.headers)).body)).toEqual([theirs.id]);
  });
});
