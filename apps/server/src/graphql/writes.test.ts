/** $graphql mutations through the Repository, access policies on every resolved resource, introspection off. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, type TestMember } from '../test/auth.js';
import { graphqlTestClient, type GraphqlTestClient } from './testing.js';

let t: TestApp;
let c: GraphqlTestClient;

beforeAll(async () => {
  t = await createTestApp({ config: { graphqlIntrospection: false } });
  c = graphqlTestClient(t);
});
afterAll(async () => {
  await t?.close();
});

interface Written {
  id: string;
  meta: { versionId: string };
  name?: { family: string }[];
}

describe('mutations (hl7.org/fhir/R4/graphql.html#mutation)', () => {
  it('creates, updates and deletes through the repository', async () => {
    const created = await c.gql<{ PatientCreate: Written }>(
      'mutation($res: PatientInput!) { PatientCreate(res: $res) { id meta { versionId } name { family } } }',
      { res: { name: [{ family: 'Created', given: ['Ann'] }], gender: 'female', birthDate: '1990-02-03' } },
    );
    expect(created.errors).toBeUndefined();
    const id = created.data!.PatientCreate.id;
    expect(created.data?.PatientCreate).toMatchObject({ meta: { versionId: '1' }, name: [{ family: 'Created' }] });
    const rest = await t.app.inject({ url: `/fhir/R4/Patient/${id}`, headers: t.authHeaders });
    expect(rest.json()).toMatchObject({ gender: 'female', birthDate: '1990-02-03' });

    const updated = await c.gql<{ PatientUpdate: Written }>(`mutation {
      PatientUpdate(id: "${id}", res: { name: [{ family: "Updated" }], active: true }) { id meta { versionId } name { family } }
    }`);
    expect(updated.errors).toBeUndefined();
    expect(updated.data?.PatientUpdate).toEqual({ id, meta: { versionId: '2' }, name: [{ family: 'Updated' }] });

    const deleted = await c.gql(`mutation { PatientDelete(id: "${id}") { id name { family } } }`);
    expect(deleted).toEqual({ data: { PatientDelete: { id, name: [{ family: 'Updated' }] } } });
    expect((await t.app.inject({ url: `/fhir/R4/Patient/${id}`, headers: t.authHeaders })).statusCode).toBe(410);
  });

  it('runs mutations in order: a later field sees an earlier write', async () => {
    const body = await c.gql<{ a: { id: string }; b: { id: string; active: boolean } }>(`mutation {
      a: PatientCreate(res: { active: false }) { id }
      b: PatientCreate(res: { active: true }) { id active }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.a.id).not.toBe(body.data?.b.id);
    expect(body.data?.b.active).toBe(true);
  });

  it('validation failures are errors with the 400 OperationOutcome, nothing written', async () => {
    const body = await c.gql('mutation { PatientCreate(res: { gender: "robot" }) { id } }');
    expect(body.data).toEqual({ PatientCreate: null });
    expect(body.errors?.[0].extensions?.status).toBe(400);
    expect(body.errors?.[0].message).toMatch(/gender/);
    const wrongId = await c.gql('mutation { PatientUpdate(id: "abc", res: { id: "def" }) { id } }');
    expect(wrongId.errors?.[0].message).toMatch(/res.id \(def\) does not match id \(abc\)/);
    const wrongType = await c.gql('mutation { PatientCreate(res: { resourceType: "Observation" }) { id } }');
    expect(wrongType.errors?.[0].extensions?.status).toBe(400);
    const missing = await c.gql('mutation { PatientDelete(id: "no-such-patient") { id } }');
    expect(missing.errors?.[0].extensions?.status).toBe(404);
  });

  it('writes contained resources (as FHIR JSON) and resolves references to them', async () => {
    const body = await c.gql<{ ObservationCreate: { id: string } }>(`mutation {
      ObservationCreate(res: {
        status: "final"
        code: { text: "with contained" }
        contained: [{ resourceType: "Patient", id: "c1", name: [{ family: "Inner" }] }]
        subject: { reference: "#c1" }
        valueQuantity: { value: 72.5, unit: "kg" }
      }) { id subject { resource { ... on Patient { name { family } } } } valueQuantity { value } }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.ObservationCreate).toMatchObject({
      subject: { resource: { name: [{ family: 'Inner' }] } },
      valueQuantity: { value: 72.5 },
    });
  });
});

describe('configuration', () => {
  it('introspection can be turned off (graphqlIntrospection)', async () => {
    const body = await c.gql('{ __schema { queryType { name } } }');
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0].message).toMatch(/introspection has been disabled/);
    const typename = await c.gql('{ __typename }');
    expect(typename.data).toEqual({ __typename: 'Query' });
  });
});

describe('access policies apply to every resolved resource', () => {
  let alice: Resource & { id: string };
  let bob: Resource & { id: string };
  let member: TestMember;
  let m: GraphqlTestClient;

  beforeAll(async () => {
    alice = await c.post({ resourceType: 'Patient', name: [{ family: 'Alice' }], birthDate: '1970-01-01' } as Resource);
    bob = await c.post({ resourceType: 'Patient', name: [{ family: 'Bob' }], birthDate: '1980-01-01' } as Resource);
    for (const [subject, status] of [
      [alice, 'final'],
      [alice, 'preliminary'],
      [bob, 'final'],
    ] as const) {
      await c.post({
        resourceType: 'Observation',
        status,
        code: { text: 'policy' },
        identifier: [{ system: 'urn:policy', value: `${subject.id}-${status}` }],
        subject: { reference: `Patient/${subject.id}` },
      } as Resource);
    }
    const policy = await c.post({
      resourceType: 'AccessPolicy',
      name: 'graphql test',
      resource: [
        { resourceType: 'Observation', criteria: 'Observation?status=final' },
        { resourceType: 'Patient', criteria: `Patient?_id=${alice.id}`, hiddenFields: ['birthDate'] },
      ],
    } as Resource);
    member = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    m = graphqlTestClient(t, () => member.headers);
  });

  it('searches, references and reverse references only see what the policy allows', async () => {
    const list = await m.gql<{
      ObservationList: { status: string; subject: { resource: { id: string; birthDate: string | null } | null } }[];
    }>(`{ ObservationList(identifier: "urn:policy|") {
      status subject { resource(optional: true) { ... on Patient { id birthDate } } }
    } }`);
    expect(list.errors).toBeUndefined();
    const rows = list.data!.ObservationList;
    expect(rows.map((o) => o.status)).toEqual(['final', 'final']);
    // Alice is visible without her hidden birthDate; Bob is outside the policy: unresolved.
    expect(rows.map((o) => o.subject.resource).sort((a, b) => (a ? -1 : b ? 1 : 0))).toEqual([
      { id: alice.id, birthDate: null },
      null,
    ]);

    const strict = await m.gql(`{ ObservationList(identifier: "urn:policy|", subject: "Patient/${bob.id}") {
      subject { resource { ... on Patient { id } } }
    } }`);
    expect(strict.errors?.[0].message).toMatch(/could not be resolved/);
    expect(JSON.stringify(strict.data)).not.toContain('1980');

    const hidden = await m.gql(`{ Patient(id: "${bob.id}") { id } }`);
    expect(hidden.data).toEqual({ Patient: null });
    expect(hidden.errors?.[0].extensions?.status).toBe(404);

    const reverse = await m.gql(
      `{ Patient(id: "${alice.id}") { birthDate ObservationList(_reference: subject) { status } } }`,
    );
    expect(reverse.data).toEqual({ Patient: { birthDate: null, ObservationList: [{ status: 'final' }] } });

    // Connections count and page only what the policy shows, at the root and inside a resource;
    // a _filter chain cannot reach through to Bob either.
    const connection = await m.gql(`{
      ObservationConnection(identifier: "urn:policy|") { count edges { resource { status } } }
      Patient(id: "${alice.id}") { ObservationConnection(_reference: subject) { count edges { resource { status } } } }
      chained: ObservationList(_filter: "patient.birthdate eq 1980-01-01") { id }
    }`);
    expect(connection.errors).toBeUndefined();
    expect(connection.data).toEqual({
      ObservationConnection: {
        count: 2,
        edges: [{ resource: { status: 'final' } }, { resource: { status: 'final' } }],
      },
      Patient: { ObservationConnection: { count: 1, edges: [{ resource: { status: 'final' } }] } },
      chained: [],
    });
    // The same chain as the project admin does find Bob's observation.
    const admin = await c.gql<{ ObservationList: { id: string }[] }>(
      `{ ObservationList(_filter: "patient.birthdate eq 1980-01-01", identifier: "urn:policy|") { id } }`,
    );
    expect(admin.data?.ObservationList).toHaveLength(1);
  });

  it('types outside the policy are 403 errors; writes outside it are refused', async () => {
    const other = await m.gql('{ PractitionerList { id } }');
    expect(other.data).toEqual({ PractitionerList: null });
    expect(other.errors?.[0].extensions?.status).toBe(403);
    const write = await m.gql(
      'mutation { ObservationCreate(res: { status: "preliminary", code: { text: "policy" } }) { id } }',
    );
    expect(write.errors?.[0].extensions?.status).toBe(403);
    const count = await t.app.inject({
      url: '/fhir/R4/Observation?identifier=urn:policy|&_summary=count',
      headers: t.authHeaders,
    });
    expect(count.json().total).toBe(3);
  });
});
