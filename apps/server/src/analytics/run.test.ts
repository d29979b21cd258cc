/**
 * ViewDefinition/$run against a real server: stored and inline views, the four formats, paging
 * past one search page, access policies, inline resources, and the errors (400/404/422). The
 * conformance suite runs through $run twice: each case's resources inline, and stored in a project.
 */
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember, createTestProject } from '../test/auth.js';
import { createTestApp, type TestApp } from '../test/app.js';
import {
  casesByFile,
  loadSofCases,
  matchesCase,
  runParametersText,
  storeSofResources,
  type SofCase,
} from '../test/sof-suite.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PATIENT_VIEW = {
  resourceType: 'ViewDefinition',
  name: 'patient_demographics',
  status: 'active',
  resource: 'Patient',
  select: [
    {
      column: [
        { name: 'id', path: 'getResourceKey()', type: 'id' },
        { name: 'gender', path: 'gender', type: 'code' },
        { name: 'birth_date', path: 'birthDate', type: 'date' },
        { name: 'active', path: 'active', type: 'boolean' },
      ],
    },
    { forEachOrNull: 'name', column: [{ name: 'family', path: 'family', type: 'string' }] },
  ],
};

async function post(resource: Json, headers: Json = t.authHeaders): Promise<Json> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType as string}`,
    headers: { ...headers, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

async function run(url: string, parameter?: Json[], headers: Json = t.authHeaders) {
  const res = await t.app.inject({
    method: parameter ? 'POST' : 'GET',
    url: `/fhir/R4/${url}`,
    headers: { ...headers, ...(parameter ? { 'content-type': FHIR } : {}) },
    ...(parameter ? { payload: { resourceType: 'Parameters', parameter } } : {}),
  });
  return res;
}

let stored: Json;

beforeAll(async () => {
  t = await createTestApp();
  stored = await post(PATIENT_VIEW);
  await post({
    resourceType: 'Patient',
    gender: 'female',
    birthDate: '1970-01-02',
    active: true,
    name: [{ family: 'Ada' }],
  });
  await post({ resourceType: 'Patient', gender: 'male', name: [{ family: 'Bo, "the" 2nd' }, { family: 'Bee' }] });
  await post({ resourceType: 'Patient', gender: 'other' });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('ViewDefinition/{id}/$run', () => {
  it('answers JSON rows of the stored view over the caller’s patients', async () => {
    const res = await run(`ViewDefinition/${stored.id}/$run`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    const rows = res.json() as Json[];
    expect(rows).toHaveLength(4);
    expect(rows.map((r) => r.family).sort()).toEqual(['Ada', 'Bee', 'Bo, "the" 2nd', null]);
    expect(rows.find((r) => r.family === 'Ada')).toMatchObject({
      gender: 'female',
      birth_date: '1970-01-02',
      active: true,
    });
  });

  it('answers CSV with a header row and quoted fields, and without the header when asked', async () => {
    const res = await run(`ViewDefinition/${stored.id}/$run?_format=csv`);
    expect(res.headers['content-type']).toContain('text/csv');
    const lines = res.body.trim().split('\r\n');
    expect(lines[0]).toBe('id,gender,birth_date,active,family');
    expect(lines).toHaveLength(5);
    expect(res.body).toContain('"Bo, ""the"" 2nd"');
    const bare = await run(`ViewDefinition/${stored.id}/$run?_format=csv&header=false`);
    expect(bare.body.trim().split('\r\n')).toHaveLength(4);
  });

  it('answers NDJSON, one row a line, and honours _limit', async () => {
    const res = await run(`ViewDefinition/${stored.id}/$run?_format=ndjson&_limit=2`);
    expect(res.headers['content-type']).toContain('application/x-ndjson');
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0])).toEqual(['id', 'gender', 'birth_date', 'active', 'family']);
  });

  it('answers Parquet with typed columns', async () => {
    const res = await run(`ViewDefinition/${stored.id}/$run?_format=parquet`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.apache.parquet');
    const raw = res.rawPayload;
    const file = new Uint8Array(raw).buffer;
    const rows = (await parquetReadObjects({ file })) as Json[];
    expect(rows).toHaveLength(4);
    expect(rows.find((r) => r.family === 'Ada')).toMatchObject({ gender: 'female', active: true });
  });

  it('answers 404 for an unknown view and 400 for an unknown format', async () => {
    expect((await run('ViewDefinition/nope/$run')).statusCode).toBe(404);
    const bad = await run(`ViewDefinition/${stored.id}/$run?_format=xlsx`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().issue[0].expression).toEqual(['_format']);
  });
});

describe('ViewDefinition/$run', () => {
  it('runs an inline view, filtered by _since and patient', async () => {
    const since = new Date().toISOString();
    const late = await post({ resourceType: 'Patient', gender: 'unknown', name: [{ family: 'Late' }] });
    const obs = await post({
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'weight' },
      subject: { reference: `Patient/${late.id}` },
      valueQuantity: { value: 70.5, unit: 'kg' },
    });
    const view = {
      resourceType: 'ViewDefinition',
      status: 'active',
      resource: 'Observation',
      select: [
        {
          column: [
            { name: 'id', path: 'getResourceKey()' },
            { name: 'patient_id', path: 'subject.getReferenceKey(Patient)' },
            { name: 'value', path: 'value.ofType(Quantity).value', type: 'decimal' },
          ],
        },
      ],
    };
    const res = await run('ViewDefinition/$run', [
      { name: 'viewResource', resource: view },
      { name: 'patient', valueReference: { reference: `Patient/${late.id}` } },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ id: obs.id, patient_id: late.id, value: 70.5 }]);
    const recent = await run('ViewDefinition/$run', [
      { name: 'viewResource', resource: PATIENT_VIEW },
      { name: '_since', valueInstant: since },
    ]);
    expect((recent.json() as Json[]).map((r) => r.family)).toEqual(['Late']);
  });

  it('runs a referenced view', async () => {
    const res = await run(`ViewDefinition/$run?viewReference=ViewDefinition/${stored.id}&_format=ndjson`);
    expect(res.statusCode).toBe(200);
    expect(res.body.trim().split('\n').length).toBeGreaterThanOrEqual(4);
  });

  it('pages through more resources than one search page', async () => {
    const view = { ...PATIENT_VIEW, resource: 'Device', select: [{ column: [{ name: 'id', path: 'id' }] }] };
    const bundle = {
      resourceType: 'Bundle',
      type: 'batch',
      entry: Array.from({ length: 1050 }, () => ({
        resource: { resourceType: 'Device' },
        request: { method: 'POST', url: 'Device' },
      })),
    };
    const batch = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/',
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: bundle,
    });
    expect(batch.statusCode).toBe(200);
    const res = await run('ViewDefinition/$run', [
      { name: 'viewResource', resource: view },
      { name: '_format', valueCode: 'csv' },
    ]);
    const lines = res.body.trim().split('\r\n');
    expect(lines).toHaveLength(1051);
    expect(new Set(lines).size).toBe(1051);
  }, 120_000);

  it('reads only what the caller’s access policy lets them read', async () => {
    const policy = await post({
      resourceType: 'AccessPolicy',
      name: 'female only',
      resource: [{ resourceType: 'Patient', criteria: 'Patient?gender=female' }, { resourceType: 'ViewDefinition' }],
    });
    const member = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    const res = await run(`ViewDefinition/${stored.id}/$run`, undefined, member.headers);
    expect(res.statusCode).toBe(200);
    expect((res.json() as Json[]).map((r) => r.gender)).toEqual(['female']);
    const refused = await run(
      'ViewDefinition/$run',
      [{ name: 'viewResource', resource: { ...PATIENT_VIEW, resource: 'Observation' } }],
      member.headers,
    );
    expect(refused.statusCode).toBe(403);
  });

  it('answers 400 naming the element of a malformed view, 422 when the data does not fit it', async () => {
    const malformed = await run('ViewDefinition/$run', [
      {
        name: 'viewResource',
        resource: { resourceType: 'ViewDefinition', resource: 'Patient', select: [{ forEach: '@@' }] },
      },
    ]);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().issue[0].expression).toEqual(['ViewDefinition.select[0].forEach']);
    const noView = await run('ViewDefinition/$run', [{ name: '_format', valueCode: 'csv' }]);
    expect(noView.statusCode).toBe(400);
    const misfit = await run('ViewDefinition/$run', [
      {
        name: 'viewResource',
        resource: { ...PATIENT_VIEW, select: [{ column: [{ name: 'family', path: 'name.family' }] }] },
      },
    ]);
    expect(misfit.statusCode).toBe(422);
    expect(misfit.json().issue[0].diagnostics ?? misfit.json().issue[0].details.text).toMatch(/collection/);
  });
});

const cases = loadSofCases();

/** ViewDefinition/$run of a case: the Parameters go as text, so that decimals reach the server as the suite wrote them. */
async function runCase(c: SofCase, inline: boolean, headers: Json) {
  return t.app.inject({
    method: 'POST',
    url: '/fhir/R4/ViewDefinition/$run',
    headers: { ...headers, 'content-type': FHIR },
    payload: runParametersText(c, inline),
  });
}

function failureOf(c: SofCase, res: Awaited<ReturnType<typeof runCase>>): string | undefined {
  const ok = c.expectError
    ? res.statusCode >= 400 && res.statusCode < 500
    : res.statusCode === 200 && matchesCase(c, res.json());
  return ok ? undefined : `${c.file}: ${c.title}: ${res.statusCode} ${res.body.slice(0, 300)}`;
}

describe.runIf(cases.length > 0)('SQL on FHIR v2 conformance through $run', () => {
  it('passes every case with its resources inline', async () => {
    const failures: string[] = [];
    for (const c of cases) {
      const failure = failureOf(c, await runCase(c, true, t.authHeaders));
      if (failure) failures.push(failure);
    }
    expect(failures).toEqual([]);
    expect(cases.length).toBe(134);
  }, 120_000);

  it('passes every case over its resources stored in a project (decimals as written, end to end)', async () => {
    // A project of its own, so that only the suite's resources are there. Ids name one resource
    // per type on the whole server and files reuse them: each file's resources are stored, run
    // and deleted before the next file's (a PUT re-creates a deleted id).
    const project = await createTestProject(t.app, t.services, 'SQL on FHIR conformance');
    const failures: string[] = [];
    for (const fileCases of casesByFile(cases)) {
      const stored = await storeSofResources(t.app, project.headers, fileCases[0].resources);
      for (const c of fileCases) {
        const failure = failureOf(c, await runCase(c, false, project.headers));
        if (failure) failures.push(failure);
      }
      for (const url of stored) {
        expect((await t.app.inject({ method: 'DELETE', url, headers: project.headers })).statusCode).toBe(204);
      }
    }
    expect(failures).toEqual([]);
  }, 180_000);
});
