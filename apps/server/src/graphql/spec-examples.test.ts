/**
 * The examples of hl7.org/fhir/R4/graphql.html, in order, against the spec's example Patient
 * (patient-example.html), with the outputs the page gives. Where the page's query is not valid
 * GraphQL (a CodeableConcept without a sub-selection), the nearest valid form is used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { graphqlTestClient, urn, type GraphqlTestClient } from './testing.js';

let t: TestApp;
let c: GraphqlTestClient;
let patientId: string;
let observationId: string;
let listId: string;
let conditionIds: string[];
const at = (type: string, id: string) => `/fhir/R4/${type}/${id}/$graphql`;

const EXAMPLE_PATIENT = {
  resourceType: 'Patient',
  identifier: [{ use: 'usual', system: 'urn:oid:1.2.36.146.595.217.0.1', value: '12345' }],
  active: true,
  name: [
    { use: 'official', family: 'Chalmers', given: ['Peter', 'James'] },
    { use: 'usual', given: ['Jim'] },
    { use: 'maiden', family: 'Windsor', given: ['Peter', 'James'] },
  ],
  gender: 'male',
  birthDate: '1974-12-25',
  _birthDate: {
    extension: [
      { url: 'http://hl7.org/fhir/StructureDefinition/patient-birthTime', valueDateTime: '1974-12-25T14:35:45-05:00' },
    ],
  },
  extension: [{ url: 'http://myextension.url/details', valueString: 'some value' }],
} as Resource;

beforeAll(async () => {
  t = await createTestApp();
  c = graphqlTestClient(t);
  const created = await c.postAll([
    EXAMPLE_PATIENT,
    {
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ system: 'http://loinc.org', code: '29463-7' }] },
      subject: { reference: urn(0) },
      valueQuantity: { value: 185, unit: 'lbs' },
    } as Resource,
    ...['relapse', 'active'].map(
      (code) =>
        ({
          resourceType: 'Condition',
          clinicalStatus: {
            coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code }],
          },
          code: { text: code },
          subject: { reference: urn(0) },
        }) as Resource,
    ),
    {
      resourceType: 'List',
      status: 'current',
      // A deleted entry is allowed only in a list of changes (lst-2).
      mode: 'changes',
      entry: Array.from({ length: 12 }, (_, i) => ({
        deleted: i === 6,
        item: { reference: `Patient/p${i}` },
      })),
    } as Resource,
  ]);
  patientId = created[0].id;
  observationId = created[1].id;
  conditionIds = [created[2].id, created[3].id];
  listId = created[4].id;
});
afterAll(async () => {
  await t?.close();
});

describe('field selection (spec: #fields)', () => {
  it('selects fields, polymorphic fields by their JSON name, and primitive extensions as _name', async () => {
    expect((await c.gql('{ name { text given family } }', undefined, at('Patient', patientId))).data).toEqual({
      name: [
        { text: null, given: ['Peter', 'James'], family: 'Chalmers' },
        { text: null, given: ['Jim'], family: null },
        { text: null, given: ['Peter', 'James'], family: 'Windsor' },
      ],
    });
    expect((await c.gql('{ valueQuantity { value unit } }', undefined, at('Observation', observationId))).data).toEqual(
      { valueQuantity: { value: 185, unit: 'lbs' } },
    );
    expect(
      (await c.gql('{ birthDate _birthDate { extension { valueDateTime } } }', undefined, at('Patient', patientId)))
        .data,
    ).toEqual({
      birthDate: '1974-12-25',
      _birthDate: { extension: [{ valueDateTime: '1974-12-25T14:35:45-05:00' }] },
    });
  });

  it('field arguments: fhirpath, a sub-property value, _count and _offset (spec: #list)', async () => {
    const body = await c.gql(
      `{
        withFamily: name(fhirpath: "family.exists()") { text given family }
        official: name(use: official) { text given family }
        myext: extension(url: "http://myextension.url/details") { value: valueString }
      }`,
      undefined,
      at('Patient', patientId),
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      withFamily: [
        { text: null, given: ['Peter', 'James'], family: 'Chalmers' },
        { text: null, given: ['Peter', 'James'], family: 'Windsor' },
      ],
      official: [{ text: null, given: ['Peter', 'James'], family: 'Chalmers' }],
      // The page shows a single object; extension is a list in the schema, so a list of one.
      myext: [{ value: 'some value' }],
    });
    const page = await c.gql<{ entry: { deleted: boolean | null; item: { reference: string } }[] }>(
      '{ entry(_count: 5, _offset: 5) { deleted item { reference } } }',
      undefined,
      at('List', listId),
    );
    expect(page.data?.entry.map((e) => e.item.reference)).toEqual(
      ['p5', 'p6', 'p7', 'p8', 'p9'].map((p) => `Patient/${p}`),
    );
    expect(page.data?.entry[1].deleted).toBe(true);
  });
});

describe('resource references (spec: #references)', () => {
  it('resolves with inline fragments, or with resource(type: …)', async () => {
    const expected = {
      id: observationId,
      subject: { reference: `Patient/${patientId}`, resource: { birthDate: '1974-12-25' } },
      code: { coding: [{ system: 'http://loinc.org', code: '29463-7' }] },
    };
    const fragments = await c.gql(
      `{ id subject { reference resource { ...on Patient { birthDate } ...on Group { name } } } code { coding { system code } } }`,
      undefined,
      at('Observation', observationId),
    );
    expect(fragments.errors).toBeUndefined();
    expect(fragments.data).toEqual(expected);
    const typed = await c.gql(
      `{ id subject { reference
          resource(type: Patient) { ...on Patient { birthDate } }
          group: resource(type: Group) { ...on Group { name } }
        } code { coding { system code } } }`,
      undefined,
      at('Observation', observationId),
    );
    expect(typed.errors).toBeUndefined();
    expect(typed.data).toEqual({ ...expected, subject: { ...expected.subject, group: null } });
  });
});

describe('searching (spec: #searching)', () => {
  it('reads one resource by id', async () => {
    expect((await c.gql(`{ Patient(id: "${patientId}") { id, active } }`)).data).toEqual({
      Patient: { id: patientId, active: true },
    });
  });

  it('lists with search parameters, - written _, bare codes', async () => {
    const body = await c.gql(
      `{ ConditionList(clinical_status: relapse, patient: "${patientId}") { id, clinicalStatus { coding { code } } } }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      ConditionList: [{ id: conditionIds[0], clinicalStatus: { coding: [{ code: 'relapse' }] } }],
    });
    const pet = await c.gql('{ PatientList(name: "pet") { name { family, given } } }');
    expect(pet.data).toEqual({
      PatientList: [
        {
          name: [
            { family: 'Chalmers', given: ['Peter', 'James'] },
            { family: null, given: ['Jim'] },
            { family: 'Windsor', given: ['Peter', 'James'] },
          ],
        },
      ],
    });
  });

  it('connections with count, offset, pagesize, cursors and edges (mode, score, resource)', async () => {
    const body = await c.gql<{
      PatientConnection: { edges: { mode: string; score: number | null; resource: unknown }[] } & Record<
        string,
        unknown
      >;
    }>(
      '{ PatientConnection(name: "pet") { count, offset, pagesize, first, previous, next, last, edges { mode, score, resource { name { family, given } } } } }',
    );
    expect(body.errors).toBeUndefined();
    const connection = body.data!.PatientConnection;
    expect(connection).toMatchObject({ count: 1, offset: 0, pagesize: 20, previous: null, next: null });
    expect(typeof connection.first).toBe('string');
    expect(connection.edges).toHaveLength(1);
    // Score is the search's relevance (Bundle.entry.search.score): this server ranks nothing, so null.
    expect(connection.edges[0]).toMatchObject({ mode: 'match', score: null });
    const again = await c.gql<{ PatientConnection: { count: number; edges: unknown[] } }>(
      `{ PatientConnection(_cursor: "${String(connection.first)}") { count edges { resource { id } } } }`,
    );
    expect(again.data?.PatientConnection).toEqual({ count: 1, edges: [{ resource: { id: patientId } }] });
  });

  it('reverse references, as a list and as a connection (spec: #reverse)', async () => {
    const body = await c.gql(
      `{
        name { family, given }
        ConditionList(_reference: patient, _sort: "_id") { id, clinicalStatus { coding { code } } }
        ConditionConnection(_reference: patient) { count, offset, pagesize, edges { mode, score, resource { ...on Condition { resourceType, id } } } }
      }`,
      undefined,
      at('Patient', patientId),
    );
    expect(body.errors).toBeUndefined();
    const data = body.data as {
      ConditionList: { id: string }[];
      ConditionConnection: { count: number; edges: { resource: { id: string } }[] };
    };
    expect(data.ConditionList.map((x) => x.id)).toEqual([...conditionIds].sort());
    expect(data.ConditionConnection.count).toBe(2);
    expect(data.ConditionConnection.edges.map((e) => e.resource.id).sort()).toEqual([...conditionIds].sort());
  });
});

describe('data flattening directives (spec: #flattening)', () => {
  const run = async (query: string) => {
    const body = await c.gql(query, undefined, at('Patient', patientId));
    expect(body.errors).toBeUndefined();
    return body.data;
  };

  it('without directives', async () => {
    expect(await run('{ identifier { system value } active name { given family } }')).toEqual({
      identifier: [{ system: 'urn:oid:1.2.36.146.595.217.0.1', value: '12345' }],
      active: true,
      name: [
        { given: ['Peter', 'James'], family: 'Chalmers' },
        { given: ['Jim'], family: null },
        { given: ['Peter', 'James'], family: 'Windsor' },
      ],
    });
  });

  it('@flatten', async () => {
    expect(await run('{ identifier @flatten { system value } active name @flatten { text given family } }')).toEqual({
      system: ['urn:oid:1.2.36.146.595.217.0.1'],
      value: ['12345'],
      active: true,
      given: ['Peter', 'James', 'Jim', 'Peter', 'James'],
      family: ['Chalmers', 'Windsor'],
    });
  });

  it('@first', async () => {
    expect(await run('{ identifier @flatten { system value } active name @flatten { given @first family } }')).toEqual({
      system: ['urn:oid:1.2.36.146.595.217.0.1'],
      value: ['12345'],
      active: true,
      given: ['Peter', 'Jim', 'Peter'],
      family: ['Chalmers', 'Windsor'],
    });
  });

  it('@singleton', async () => {
    expect(
      await run(
        '{ identifier @flatten { system @singleton value @singleton } active name @flatten @first { text given family @singleton } }',
      ),
    ).toEqual({
      system: 'urn:oid:1.2.36.146.595.217.0.1',
      value: '12345',
      active: true,
      given: ['Peter', 'James'],
      family: 'Chalmers',
    });
  });

  it('@slice by a FHIRPath and by $index', async () => {
    expect(
      await run(
        '{ identifier @flatten { system value } active name @flatten @slice(path: "use") { given family @singleton } }',
      ),
    ).toEqual({
      system: ['urn:oid:1.2.36.146.595.217.0.1'],
      value: ['12345'],
      active: true,
      'given.official': ['Peter', 'James'],
      'family.official': 'Chalmers',
      'given.usual': ['Jim'],
      'given.maiden': ['Peter', 'James'],
      'family.maiden': 'Windsor',
    });
    expect(
      await run(
        '{ identifier @flatten { system value } active name @flatten @slice(path: "$index") { given family @singleton } }',
      ),
    ).toEqual({
      system: ['urn:oid:1.2.36.146.595.217.0.1'],
      value: ['12345'],
      active: true,
      'given.0': ['Peter', 'James'],
      'family.0': 'Chalmers',
      'given.1': ['Jim'],
      'given.2': ['Peter', 'James'],
      'family.2': 'Windsor',
    });
    expect(await run('{ name @slice(path: "$index") @flatten { given @first @singleton family } }')).toEqual({
      'given.0': 'Peter',
      'family.0': ['Chalmers'],
      'given.1': 'Jim',
      'given.2': 'Peter',
      'family.2': ['Windsor'],
    });
    // Without @flatten, each item under its own key; suffixes add up when slices nest.
    expect(await run('{ name @slice(path: "use") { family given @slice(path: "$index") } }')).toEqual({
      'name.official': { family: 'Chalmers', 'given.0': 'Peter', 'given.1': 'James' },
      'name.usual': { family: null, 'given.0': 'Jim' },
      'name.maiden': { family: 'Windsor', 'given.0': 'Peter', 'given.1': 'James' },
    });
  });
});

describe('mutations (spec: #mutations)', () => {
  it('PatientCreate(res), PatientUpdate(id, res), PatientDelete(id)', async () => {
    const created = await c.gql<{ PatientCreate: { id: string } }>(
      'mutation { PatientCreate(res: { resourceType: "Patient", id: "ignored", active: true }) { id active } }',
    );
    expect(created.errors).toBeUndefined();
    const id = created.data!.PatientCreate.id;
    expect(id).not.toBe('ignored'); // "if it is present, the value is overwritten by the server"
    const updated = await c.gql(`mutation { PatientUpdate(id: "${id}", res: { active: false }) { id active } }`);
    expect(updated.data).toEqual({ PatientUpdate: { id, active: false } });
    const deleted = await c.gql(`mutation { PatientDelete(id: "${id}") { id } }`);
    expect(deleted.errors).toBeUndefined();
    const gone = await c.gql(`{ Patient(id: "${id}") { id } }`);
    expect([404, 410]).toContain(gone.errors?.[0].extensions?.status);
  });
});
