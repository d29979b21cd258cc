import { existsSync } from 'node:fs';
import type { Resource } from '@hearth/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageResources, SPEC_EXAMPLES } from '../../../../packages/core/src/validation/spec-data.test-util.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject } from '../test/auth.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { checkCodings, collectCodings } from './codings.js';

const CLINICAL = 'http://terminology.hl7.org/CodeSystem/condition-clinical';

describe('collectCodings', () => {
  it('finds the codings of CodeableConcepts, Coding elements, extensions, contained resources and Bundle entries', () => {
    const bundle = {
      resourceType: 'Bundle',
      type: 'collection',
      entry: [
        {
          resource: {
            resourceType: 'Condition',
            clinicalStatus: { coding: [{ system: CLINICAL, code: 'active' }] },
            code: { coding: [{ code: 'no-system' }, { system: 'http://snomed.info/sct', code: '1', display: 'x' }] },
            contained: [
              { resourceType: 'Practitioner', qualification: [{ code: { coding: [{ system: 's', code: 'q' }] } }] },
            ],
            extension: [{ url: 'http://e', valueCoding: { system: 'e', code: 'ext' } }],
            meta: { security: [{ system: 'sec', code: 'R' }] },
          },
        },
      ],
    } as unknown as Resource;
    expect(collectCodings(bundle).map((c) => `${c.expression} ${c.system}|${c.code}`)).toEqual([
      `Bundle.entry[0].resource.meta.security[0] sec|R`,
      `Bundle.entry[0].resource.contained[0].qualification[0].code.coding[0] s|q`,
      `Bundle.entry[0].resource.extension[0].valueCoding e|ext`,
      `Bundle.entry[0].resource.clinicalStatus.coding[0] ${CLINICAL}|active`,
      `Bundle.entry[0].resource.code.coding[1] http://snomed.info/sct|1`,
    ]);
  });
});

describe('checkCodings against the terminology a project sees', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const condition = (coding: object): Resource =>
    ({
      resourceType: 'Condition',
      clinicalStatus: { coding: [coding] },
      subject: { reference: 'Patient/1' },
    }) as Resource;

  it("refuses a code a complete code system does not have, and a display that is not the system's", async () => {
    const unknown = await checkCodings(pool, condition({ system: CLINICAL, code: 'activ' }), {});
    expect(unknown).toMatchObject([
      {
        severity: 'error',
        code: 'code-invalid',
        expression: ['Condition.clinicalStatus.coding[0].code'],
        details: { text: `Unknown code "activ" in the code system ${CLINICAL}` },
      },
    ]);
    const wrong = await checkCodings(pool, condition({ system: CLINICAL, code: 'active', display: 'Resolved' }), {});
    expect(wrong).toHaveLength(1);
    expect(wrong[0].expression).toEqual(['Condition.clinicalStatus.coding[0].display']);
    expect(wrong[0].details?.text).toContain('"Active"');
  });

  it('accepts the display in any case and spacing, a coding without display, and systems Hearth does not hold', async () => {
    expect(await checkCodings(pool, condition({ system: CLINICAL, code: 'active', display: ' ACTIVE ' }), {})).toEqual(
      [],
    );
    expect(
      await checkCodings(pool, condition({ system: CLINICAL, code: 'active', display: 'Ac\u200Btive' }), {}),
    ).toEqual([]);
    expect(await checkCodings(pool, condition({ system: CLINICAL, code: 'active' }), {})).toEqual([]);
    // LOINC is not loaded; SNOMED CT is held as content "not-present": neither judges a code.
    expect(
      await checkCodings(pool, condition({ system: 'http://loinc.org', code: 'nonsense', display: 'x' }), {}),
    ).toEqual([]);
    expect(await checkCodings(pool, condition({ system: 'http://snomed.info/sct', code: '1' }), {})).toEqual([]);
  });
});

describe('$validate judges codings with the terminology of the caller’s project', () => {
  let t: TestApp;
  let other: Record<string, string>;
  const SYSTEM = 'http://example.org/fhir/CodeSystem/triage';

  beforeAll(async () => {
    t = await createTestApp();
    const created = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/CodeSystem',
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: {
        resourceType: 'CodeSystem',
        url: SYSTEM,
        status: 'active',
        content: 'complete',
        concept: [
          { code: 'red', display: 'Immediate', designation: [{ language: 'fr', value: 'Immédiat' }] },
          { code: 'green', display: 'Minor' },
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    other = (await createTestProject(t.app, t.services, 'Another')).headers;
  });
  afterAll(async () => {
    await t?.close();
  });

  const validate = async (headers: Record<string, string>, coding: object) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Observation/$validate',
      headers: { ...headers, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Observation', status: 'final', code: { coding: [coding] } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const issues = (res.json() as { issue: { severity: string; expression?: string[] }[] }).issue;
    return issues.filter((i) => i.severity === 'error').map((i) => i.expression?.[0]);
  };

  it("the project's own code system: its codes, displays and designations", async () => {
    expect(await validate(t.authHeaders, { system: SYSTEM, code: 'red', display: 'Immediate' })).toEqual([]);
    expect(await validate(t.authHeaders, { system: SYSTEM, code: 'red', display: 'Immédiat' })).toEqual([]);
    expect(await validate(t.authHeaders, { system: SYSTEM, code: 'red', display: 'Minor' })).toEqual([
      'Observation.code.coding[0].display',
    ]);
    expect(await validate(t.authHeaders, { system: SYSTEM, code: 'blue' })).toEqual([
      'Observation.code.coding[0].code',
    ]);
  });

  it('another project does not see it, so does not judge by it', async () => {
    expect(await validate(other, { system: SYSTEM, code: 'blue' })).toEqual([]);
  });
});

describe.skipIf(!existsSync(SPEC_EXAMPLES))('the R4 specification examples', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('have their codings judged without a false refusal', { timeout: 300_000 }, async () => {
    let resources = 0;
    let codings = 0;
    const refused: string[] = [];
    for (const [name, resource] of packageResources(SPEC_EXAMPLES)) {
      resources++;
      codings += collectCodings(resource as Resource).length;
      for (const issue of await checkCodings(pool, resource as Resource, {})) {
        refused.push(`${name} ${issue.expression?.[0]}: ${issue.details?.text}`);
      }
    }
    console.log(`spec examples: ${resources} resources, ${codings} codings, ${refused.length} refused`);
    expect(refused).toEqual([]);
  });
});
