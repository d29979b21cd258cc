import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
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
    const read = await t.app.inject({ url: '/fhir/R4/ValueSet/administrative-gender' });
    expect(read.statusCode).toBe(200);
    expect(read.json().url).toBe('http://hl7.org/fhir/ValueSet/administrative-gender');
  });

  it('is idempotent: a second start loads nothing', async () => {
    const again = await loadR4Terminology(
      t.pool,
      t.services.repositoryDeps,
      t.services.superAdminProjectId,
      t.services.repositoryDeps as never,
    );
    expect(again.loaded).toBe(false);
  });
});
