/**
 * Bulk writes ($import's path): a batch checked by prepareBulk and written by writeBulk through
 * COPY in one transaction, each resource as a create or update with its own id would be written:
 * readable, in its history, indexed for every kind of parameter, told to listeners; refused
 * resources answered one by one without costing the others; ids of another project left alone.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject } from '../test/auth.js';
import { Repository } from './repository.js';
import type { SearchIndexer, WriteEvent } from './types.js';

let t: TestApp;
let repo: Repository;
let otherRepo: Repository;
const heard: WriteEvent[] = [];
let unsubscribe: (() => void) | undefined;

beforeAll(async () => {
  t = await createTestApp();
  const projectId = t.testProject.projectId;
  repo = new Repository(t.services.repositoryDeps, { projectId, readProjects: [projectId], system: true });
  const other = await createTestProject(t.app, t.services, 'Other project');
  otherRepo = new Repository(t.services.repositoryDeps, {
    projectId: other.projectId,
    readProjects: [other.projectId],
    system: true,
  });
  unsubscribe = t.services.writes.subscribe((events) => heard.push(...events));
});
afterAll(async () => {
  unsubscribe?.();
  await t?.close();
});

async function search(query: string): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: `/fhir/R4/${query}`, headers: t.authHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return ((res.json() as { entry?: { resource: { id: string } }[] }).entry ?? []).map((e) => e.resource.id);
}

/** Writes a batch as $import does, and whether it went through the indexer's COPY. */
async function bulk(resources: Resource[], as = repo) {
  const copyRows = vi.spyOn(t.services.repositoryDeps.indexer as Required<SearchIndexer>, 'copyRows');
  try {
    const results = await as.writeBulk(await as.prepareBulk(resources));
    const copied = await Promise.all(copyRows.mock.results.map((r) => r.value as Promise<boolean>));
    return { results, copied: copied.includes(true) };
  } finally {
    copyRows.mockRestore();
  }
}

const versionsOf = async (type: string, id: string) =>
  (
    await t.pool.query<{ v: number }>(`SELECT version_id AS v FROM "${type}_History" WHERE id = $1 ORDER BY 1`, [id])
  ).rows.map((r) => r.v);

describe('writeBulk', () => {
  it('writes new resources with their ids through COPY: readable, in history, searchable, told to listeners', async () => {
    const [p, o, q] = [randomUUID(), randomUUID(), randomUUID()];
    const family = `Bulk${randomUUID().slice(0, 8)}`;
    const resources: Resource[] = [
      { resourceType: 'Patient', id: p, name: [{ family }], gender: 'female', birthDate: '1971-02-03' },
      {
        resourceType: 'Observation',
        id: o,
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code: '29463-7' }] },
        subject: { reference: `Patient/${p}` },
        performer: [{ reference: '#pr' }],
        contained: [{ resourceType: 'Practitioner', id: 'pr', name: [{ family: `${family}Doc` }] }],
        effectiveDateTime: '2020-05-06T07:08:09Z',
        valueQuantity: { value: 72.5, unit: 'kg', system: 'http://unitsofmeasure.org', code: 'kg' },
      } as Resource,
      { resourceType: 'Questionnaire', id: q, status: 'active', url: `http://example.org/q/${q}` } as Resource,
    ];
    heard.length = 0;
    const { results, copied } = await bulk(resources);
    expect(copied).toBe(true);
    expect(results).toEqual([{ created: true }, { created: true }, { created: true }]);

    const read = await repo.readResource('Observation', o);
    expect(read.resource).toMatchObject({ id: o, meta: { versionId: '1' }, subject: { reference: `Patient/${p}` } });
    expect(read.resource.meta?.lastUpdated).toBeTruthy();
    expect(await versionsOf('Observation', o)).toEqual([1]);
    const { rows } = await t.pool.query<{ compartments: string[] }>(
      'SELECT compartments FROM "Observation" WHERE id = $1',
      [o],
    );
    expect(rows[0].compartments).toContain(`Patient/${p}`);
    // Every kind of index row: string, token, date, reference, quantity, uri, and a contained resource's.
    expect(await search(`Patient?family=${family}&gender=female&birthdate=1971-02-03`)).toEqual([p]);
    expect(await search(`Observation?code=http://loinc.org|29463-7&subject=Patient/${p}&date=2020-05-06`)).toEqual([o]);
    expect(await search(`Observation?value-quantity=72.5|http://unitsofmeasure.org|kg`)).toEqual([o]);
    expect(await search(`Observation?performer.name=${family}Doc`)).toEqual([o]);
    expect(await search(`Questionnaire?url=http://example.org/q/${q}`)).toEqual([q]);
    expect(await search(`Patient/${p}/Observation`)).toEqual([o]);
    expect(heard.map((e) => `${e.interaction} ${e.version.resourceType}/${e.version.id}`).sort()).toEqual(
      [`create Patient/${p}`, `create Observation/${o}`, `create Questionnaire/${q}`].sort(),
    );
  });

  it('answers a refused resource on its own and writes the others of its batch', async () => {
    const [good1, bad, good2] = [randomUUID(), randomUUID(), randomUUID()];
    const { results, copied } = await bulk([
      { resourceType: 'Patient', id: good1 },
      { resourceType: 'Patient', id: bad, gender: 'sometimes' } as Resource,
      { resourceType: 'Patient', id: good2 },
    ]);
    expect(copied).toBe(true);
    expect(results[0]).toEqual({ created: true });
    expect(results[1].outcome?.issue[0]).toMatchObject({ severity: 'error', expression: ['Patient.gender'] });
    expect(results[2]).toEqual({ created: true });
    expect((await repo.readResource('Patient', good2)).versionId).toBe(1);
    await expect(repo.readResource('Patient', bad)).rejects.toMatchObject({ outcome: { id: 'not-found' } });
  });

  it('gives stored ids a new version, with their index rows replaced', async () => {
    const id = randomUUID();
    const [before, after] = [`Before${id.slice(0, 8)}`, `After${id.slice(0, 8)}`];
    await bulk([{ resourceType: 'Patient', id, name: [{ family: before }] }]);
    heard.length = 0;
    const { results, copied } = await bulk([
      { resourceType: 'Patient', id, name: [{ family: after }] },
      { resourceType: 'Patient', id: randomUUID() },
    ]);
    expect(copied).toBe(true);
    expect(results).toEqual([{ created: false }, { created: true }]);
    expect((await repo.readResource('Patient', id)).resource).toMatchObject({
      meta: { versionId: '2' },
      name: [{ family: after }],
    });
    expect(await versionsOf('Patient', id)).toEqual([1, 2]);
    expect((await repo.readVersion('Patient', id, '1')).resource).toMatchObject({ name: [{ family: before }] });
    expect(await search(`Patient?family=${after}`)).toEqual([id]);
    expect(await search(`Patient?family=${before}`)).toEqual([]);
    const update = heard.find((e) => e.version.id === id);
    expect(update).toMatchObject({ interaction: 'update', previous: { versionId: 1 } });
  });

  it('re-creates a deleted resource as its next version', async () => {
    const id = randomUUID();
    await bulk([{ resourceType: 'Patient', id }]);
    await repo.deleteResource('Patient', id);
    const { results } = await bulk([{ resourceType: 'Patient', id, gender: 'male' }]);
    expect(results).toEqual([{ created: true }]);
    expect((await repo.readResource('Patient', id)).resource).toMatchObject({
      gender: 'male',
      meta: { versionId: '3' },
    });
    expect(await versionsOf('Patient', id)).toEqual([1, 2, 3]);
  });

  it("leaves another project's resource alone: its id is a conflict for that resource only", async () => {
    const [theirs, mine] = [randomUUID(), randomUUID()];
    await otherRepo.createMany([{ resourceType: 'Patient', id: theirs, gender: 'female' }]);
    const { results, copied } = await bulk([
      { resourceType: 'Patient', id: theirs, gender: 'male' },
      { resourceType: 'Patient', id: mine },
    ]);
    expect(copied).toBe(true);
    expect(results[0].outcome?.issue[0]).toMatchObject({ code: 'duplicate' });
    expect(results[1]).toEqual({ created: true });
    const stored = await otherRepo.readResource('Patient', theirs);
    expect(stored.resource).toMatchObject({ gender: 'female', meta: { versionId: '1' } });
    await expect(repo.readResource('Patient', theirs)).rejects.toMatchObject({ outcome: { id: 'not-found' } });
  });

  it('answers each resource on its own when a concurrent create of one of its ids fails the batch', async () => {
    const [raced, mine] = [randomUUID(), randomUUID()];
    const prepared = await repo.prepareBulk([
      { resourceType: 'Patient', id: raced },
      { resourceType: 'Patient', id: mine },
    ]);
    const client = await t.pool.connect();
    try {
      // Another project creates one of the ids, uncommitted: the batch's COPY waits for it, then fails.
      await client.query('BEGIN');
      await new Repository(t.services.repositoryDeps, otherRepo.scope, client).createMany([
        { resourceType: 'Patient', id: raced },
      ]);
      const writing = repo.writeBulk(prepared);
      for (let i = 0; i < 100; i++) {
        const { rows } = await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted');
        if (rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await client.query('COMMIT');
      const results = await writing;
      expect(results[0].outcome?.issue[0]).toMatchObject({ code: 'duplicate' });
      expect(results[1]).toEqual({ created: true });
    } finally {
      client.release();
    }
    expect((await repo.readResource('Patient', mine)).versionId).toBe(1);
    expect((await otherRepo.readResource('Patient', raced)).versionId).toBe(1);
  });

  it('writes the types whose writes need more than index rows the ordinary way', async () => {
    const id = randomUUID();
    const { results, copied } = await bulk([
      {
        resourceType: 'CodeSystem',
        id,
        url: `http://example.org/cs/${id}`,
        status: 'active',
        content: 'complete',
        concept: [{ code: 'a', display: 'A' }],
      } as Resource,
    ]);
    expect(copied).toBe(false);
    expect(results).toEqual([{ created: true }]);
    expect(await search(`CodeSystem?url=http://example.org/cs/${id}`)).toEqual([id]);
  });
});
