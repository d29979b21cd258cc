import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createLogger } from '../platform/logger.js';
import { randomUUID } from 'node:crypto';
import { Repository } from '../storage/repository.js';
import { loadR4Terminology } from './loader.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('R4 terminology load', () => {
  it('loaded the spec code systems, value sets and concept maps at start, with hierarchy', async () => {
    const counts = await t.pool.query<{ cs: number; vs: number; cm: number; concepts: number; closure: number }>(
      `SELECT (SELECT count(*) FROM terminology_code_system)::int AS cs,
              (SELECT count(*) FROM terminology_value_set)::int AS vs,
              (SELECT count(*) FROM terminology_concept_map)::int AS cm,
              (SELECT count(*) FROM terminology_concept)::int AS concepts,
              (SELECT count(*) FROM terminology_concept_closure)::int AS closure`,
    );
    console.log('terminology rows', counts.rows[0]);
    expect(counts.rows[0].cs).toBeGreaterThan(1000);
    expect(counts.rows[0].vs).toBeGreaterThan(1000);
    expect(counts.rows[0].cm).toBeGreaterThan(10);
    expect(counts.rows[0].concepts).toBeGreaterThan(15000);
    // The resources live in the terminology project, readable by any scope that includes it.
    const projectId = t.services.terminology.projectId;
    expect(projectId).toMatch(/^[0-9a-f-]{36}$/);
    expect(projectId).not.toBe(t.services.superAdminProjectId);
    const repo = new Repository(t.services.repositoryDeps, { projectId: randomUUID(), readProjects: [projectId] });
    const read = await repo.readResource('ValueSet', 'administrative-gender');
    expect(read.resource.url).toBe('http://hl7.org/fhir/ValueSet/administrative-gender');
    expect((await repo.readResource('Project', projectId)).resource.name).toBe('Terminology');
    const conceptMap = await repo.readResource('ConceptMap', 'cm-administrative-gender-v2');
    expect(conceptMap.resource.resourceType).toBe('ConceptMap');
    // Over REST, from an ordinary project (the auth module shares the terminology project).
    const rest = await t.app.inject({ headers: t.authHeaders, url: '/fhir/R4/ValueSet/administrative-gender' });
    expect(rest.statusCode).toBe(200);
    expect(rest.json().url).toBe('http://hl7.org/fhir/ValueSet/administrative-gender');
  });

  it('loaded the platform code systems and value sets too', async () => {
    const res = await t.app.inject({
      headers: t.authHeaders,
      url: '/fhir/R4/ValueSet/$expand?url=https://hearth.dev/fhir/ValueSet/client-application-status',
    });
    expect(res.statusCode).toBe(200);
    const codes = (res.json().expansion.contains as { code: string }[]).map((c) => c.code).sort();
    expect(codes).toEqual(['active', 'error', 'off']);
  });

  it('a database loaded before a part of the content existed gets that part at its next start', async () => {
    await t.pool.query(`DELETE FROM hearth_setting WHERE key = 'terminology.platform.loaded'`);
    const again = await loadR4Terminology(t.pool, t.services.repositoryDeps, createLogger('silent'));
    expect(again.loaded).toBe(true);
    expect(again.projectId).toBe(t.services.terminology.projectId);
    // The platform resources were there already: nothing is written twice.
    expect(again.resources).toBe(0);
    const marker = await t.pool.query(`SELECT 1 FROM hearth_setting WHERE key = 'terminology.platform.loaded'`);
    expect(marker.rowCount).toBe(1);
  });

  it('is idempotent: a second start loads nothing', async () => {
    const again = await loadR4Terminology(t.pool, t.services.repositoryDeps, createLogger('silent'));
    expect(again.loaded).toBe(false);
    expect(again.projectId).toBe(t.services.terminology.projectId);
  });
});
