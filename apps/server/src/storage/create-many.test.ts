import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { Repository } from './repository.js';
import type { WriteEvent } from './types.js';

let t: TestApp;
let repo: Repository;
const heard: WriteEvent[] = [];
let unsubscribe: (() => void) | undefined;

beforeAll(async () => {
  t = await createTestApp();
  const projectId = t.testProject.projectId;
  repo = new Repository(t.services.repositoryDeps, { projectId, readProjects: [projectId], system: true });
  unsubscribe = t.services.writes.subscribe((events) => heard.push(...events));
});
afterAll(async () => {
  unsubscribe?.();
  await t?.close();
});

async function search(query: string): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: `/fhir/R4/${query}`, headers: t.authHeaders });
  expect(res.statusCode).toBe(200);
  return ((res.json() as { entry?: { resource: { id: string } }[] }).entry ?? []).map((e) => e.resource.id);
}

describe('createMany outside a transaction (one statement for rows and index rows)', () => {
  it('writes current rows, history rows, compartments and index rows of every type, and tells listeners', async () => {
    const [p1, p2, o1] = [randomUUID(), randomUUID(), randomUUID()];
    const family = `Many${randomUUID().slice(0, 8)}`;
    const resources: Resource[] = [
      { resourceType: 'Patient', id: p1, name: [{ family }] },
      { resourceType: 'Patient', id: p2, name: [{ family }] },
      {
        resourceType: 'Observation',
        id: o1,
        status: 'final',
        code: { text: 'many' },
        subject: { reference: `Patient/${p1}` },
      },
    ];
    heard.length = 0;
    const results = await repo.createMany(resources);
    expect(results.map((r) => [r.resource.id, r.versionId, r.created])).toEqual([
      [p1, 1, true],
      [p2, 1, true],
      [o1, 1, true],
    ]);
    expect(heard.map((e) => `${e.interaction} ${e.version.resourceType}/${e.version.id}`).sort()).toEqual(
      [`create Patient/${p1}`, `create Patient/${p2}`, `create Observation/${o1}`].sort(),
    );

    expect((await repo.readVersion('Observation', o1, '1')).resource).toMatchObject({ subject: resources[2].subject });
    const { rows } = await t.pool.query<{ compartments: string[] }>(
      'SELECT compartments FROM "Observation" WHERE id = $1',
      [o1],
    );
    expect(rows[0].compartments).toContain(`Patient/${p1}`);
    expect((await search(`Patient?family=${family}`)).sort()).toEqual([p1, p2].sort());
    expect(await search(`Observation?subject=Patient/${p1}`)).toEqual([o1]);
    expect(await search(`Patient/${p1}/Observation`)).toEqual([o1]);
  });

  it('writes nothing when one id already exists (409)', async () => {
    const existing = randomUUID();
    await repo.createMany([{ resourceType: 'Patient', id: existing }]);
    const fresh = randomUUID();
    await expect(
      repo.createMany([
        { resourceType: 'Patient', id: fresh },
        { resourceType: 'Patient', id: existing },
      ]),
    ).rejects.toMatchObject({ outcome: { issue: [{ code: 'conflict' }] } });
    const { rows } = await t.pool.query('SELECT 1 FROM "Patient_History" WHERE id = $1', [fresh]);
    expect(rows).toHaveLength(0);
    await expect(repo.readResource('Patient', fresh)).rejects.toThrow();
  });
});
