/** $graphql reads: the examples of hl7.org/fhir/R4/graphql.html, searches, paging, references. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { graphqlTestClient, urn, type GraphqlBody, type GraphqlTestClient, type Named } from './testing.js';

let t: TestApp;
let c: GraphqlTestClient;
let patient: Resource & { id: string };
let practitioner: Resource & { id: string };
let observations: (Resource & { id: string })[];

const TAG = `gq${Date.now()}`;

beforeAll(async () => {
  t = await createTestApp();
  c = graphqlTestClient(t);
  // The spec's example patient (hl7.org/fhir/R4/patient-example.html), trimmed.
  const created = await c.postAll([
    {
      resourceType: 'Patient',
      identifier: [{ system: 'urn:oid:1.2.36.146.595.217.0.1', value: TAG }],
      active: true,
      name: [
        { use: 'official', family: 'Chalmers', given: ['Peter', 'James'] },
        { use: 'usual', given: ['Jim'] },
        { use: 'maiden', family: 'Windsor', given: ['Peter', 'James'] },
      ],
      telecom: [
        { system: 'phone', value: '(03) 5555 6473', use: 'work' },
        { system: 'email', value: 'peter@example.org', use: 'home' },
      ],
      gender: 'male',
      birthDate: '1974-12-25',
      _birthDate: {
        extension: [
          {
            url: 'http://hl7.org/fhir/StructureDefinition/patient-birthTime',
            valueDateTime: '1974-12-25T14:35:45-05:00',
          },
        ],
      },
      address: [{ use: 'home', city: 'PleasantVille', state: 'Vic' }],
    } as Resource,
    { resourceType: 'Practitioner', name: [{ family: 'Careful', given: ['Adam'] }] } as Resource,
    ...['8867-4', '8310-5', '9279-1'].map(
      (code, i) =>
        ({
          resourceType: 'Observation',
          status: i === 2 ? 'preliminary' : 'final',
          code: { coding: [{ system: 'http://loinc.org', code }], text: `obs ${i}` },
          subject: { reference: urn(0) },
          performer: [{ reference: urn(1) }],
          valueQuantity: { value: 60 + i, unit: 'beats/minute' },
        }) as Resource,
    ),
  ]);
  [patient, practitioner, ...observations] = created;
});
afterAll(async () => {
  await t?.close();
});

describe('read and instance level', () => {
  it('reads by id and answers application/json', async () => {
    const body = await c.gql(
      `{ Patient(id: "${patient.id}") { resourceType id active gender birthDate name { use given family } } }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.Patient).toEqual({
      resourceType: 'Patient',
      id: patient.id,
      active: true,
      gender: 'male',
      birthDate: '1974-12-25',
      name: [
        { use: 'official', given: ['Peter', 'James'], family: 'Chalmers' },
        { use: 'usual', given: ['Jim'], family: null },
        { use: 'maiden', given: ['Peter', 'James'], family: 'Windsor' },
      ],
    });
  });

  it('queries one resource at [type]/[id]/$graphql, by POST and GET (spec: instance level)', async () => {
    const query = '{ id name { text given family } _birthDate { extension { url valueDateTime } } }';
    const post = await c.gql(query, undefined, `/fhir/R4/Patient/${patient.id}/$graphql`);
    expect(post.data).toMatchObject({
      id: patient.id,
      _birthDate: { extension: [{ valueDateTime: '1974-12-25T14:35:45-05:00' }] },
    });
    const get = await t.app.inject({
      url: `/fhir/R4/Patient/${patient.id}/$graphql?query=${encodeURIComponent(query)}`,
      headers: t.authHeaders,
    });
    expect(get.statusCode).toBe(200);
    expect(get.json().data).toEqual(post.data);
    const missing = await t.app.inject({
      url: `/fhir/R4/Patient/nope/$graphql?query=${encodeURIComponent(query)}`,
      headers: t.authHeaders,
    });
    expect(missing.statusCode).toBe(404);
  });

  it('a missing resource is an error in `errors` with its OperationOutcome, data null', async () => {
    const body = await c.gql('{ Patient(id: "does-not-exist") { id } }');
    expect(body.data).toEqual({ Patient: null });
    expect(body.errors?.[0].path).toEqual(['Patient']);
    expect(body.errors?.[0].extensions?.status).toBe(404);
    expect(body.errors?.[0].extensions?.outcome?.resourceType).toBe('OperationOutcome');
  });
});

describe('search lists and connections', () => {
  it('takes every search parameter as an argument, with - written _', async () => {
    const byName = await c.gql(`{ PatientList(name: "Chalmers", identifier: "${TAG}") { id } }`);
    expect(byName.data?.PatientList).toEqual([{ id: patient.id }]);
    const byCity = await c.gql(`{ PatientList(address_city: "PleasantVille", identifier: "${TAG}") { id } }`);
    expect(byCity.data?.PatientList).toEqual([{ id: patient.id }]);
    const none = await c.gql(`{ PatientList(address_city: "Elsewhere", identifier: "${TAG}") { id } }`);
    expect(none.data?.PatientList).toEqual([]);
  });

  it('takes a list of values, ORed, bare codes allowed; a comma inside a value is not an OR (spec: searching)', async () => {
    const ids = (b: GraphqlBody<{ ObservationList: { id: string }[] }>) =>
      b.data?.ObservationList.map((o) => o.id).sort();
    const subject = `subject: "Patient/${patient.id}", code: "http://loinc.org|"`;
    const both = await c.gql<{ ObservationList: { id: string }[] }>(
      `{ ObservationList(${subject}, status: [final, preliminary]) { id } }`,
    );
    expect(ids(both)).toEqual(observations.map((o) => o.id).sort());
    const one = await c.gql<{ ObservationList: { id: string }[] }>(
      `{ ObservationList(${subject}, status: preliminary) { id } }`,
    );
    expect(ids(one)).toEqual([observations[2].id]);
    const byId = await c.gql<{ PatientList: { id: string }[] }>(
      `{ PatientList(_id: ["${patient.id}", "not-there"]) { id } }`,
    );
    expect(byId.data?.PatientList).toEqual([{ id: patient.id }]);
    // As variables, in the spec schema's scalar types.
    const vars = await c.gql<{ ObservationList: { id: string }[] }>(
      `query ($s: [token], $p: [reference]) { ObservationList(status: $s, subject: $p, code: "http://loinc.org|") { id } }`,
      { s: ['preliminary'], p: `Patient/${patient.id}` },
    );
    expect(ids(vars)).toEqual([observations[2].id]);
    // REST would read "Chalmers,Nobody" as two names; here it is one value that matches nobody.
    const comma = await c.gql(`{ PatientList(name: "Chalmers,Nobody", identifier: "${TAG}") { id } }`);
    expect(comma.data?.PatientList).toEqual([]);
    const orNames = await c.gql(`{ PatientList(name: ["Nobody", "Chalmers"], identifier: "${TAG}") { id } }`);
    expect(orNames.data?.PatientList).toEqual([{ id: patient.id }]);
  });

  it('chains, modifiers and AND through _filter (spec: searching)', async () => {
    const ids = (b: GraphqlBody<{ ObservationList: { id: string }[] }>) =>
      b.data?.ObservationList.map((o) => o.id).sort();
    const chained = await c.gql<{ ObservationList: { id: string }[] }>(
      `{ ObservationList(_filter: "patient.identifier eq ${TAG} and status eq final") { id } }`,
    );
    expect(chained.errors).toBeUndefined();
    expect(ids(chained)).toEqual([observations[0].id, observations[1].id].sort());
    const withArgs = await c.gql<{ ObservationList: { id: string }[] }>(
      `{ ObservationList(_filter: "performer.name eq Careful and patient.identifier eq ${TAG}", status: preliminary) { id } }`,
    );
    expect(ids(withArgs)).toEqual([observations[2].id]);
    const bad = await c.gql(`{ ObservationList(_filter: "status eq") { id } }`);
    expect(bad.errors?.[0].extensions?.status).toBe(400);
    expect(bad.errors?.[0].message).toMatch(/_filter/);
  });

  it('a fhirpath argument keeps the matches for which it is true; a bad one is a 400', async () => {
    const list = await c.gql<{ ObservationList: { id: string }[] }>(
      `{ ObservationList(subject: "Patient/${patient.id}", code: "http://loinc.org|", fhirpath: "value.value > 60") { id } }`,
    );
    expect(list.errors).toBeUndefined();
    expect(list.data?.ObservationList.map((o) => o.id).sort()).toEqual([observations[1].id, observations[2].id].sort());
    const connection = await c.gql<{ ObservationConnection: { edges: { resource: { id: string } }[] } }>(
      `{ ObservationConnection(subject: "Patient/${patient.id}", code: "http://loinc.org|", fhirpath: "status = 'preliminary'") { edges { resource { id } } } }`,
    );
    expect(connection.data?.ObservationConnection.edges.map((e) => e.resource.id)).toEqual([observations[2].id]);
    const bad = await c.gql(`{ ObservationList(fhirpath: "value.value >>> 60") { id } }`);
    expect(bad.errors?.[0].extensions?.status).toBe(400);
    expect(bad.errors?.[0].message).toMatch(/fhirpath/);
  });

  it('sorts and pages with _sort, _count and _offset', async () => {
    const q = (extra: string) =>
      `{ ObservationList(subject: "Patient/${patient.id}", code: "http://loinc.org|", _sort: "-_id" ${extra}) { id } }`;
    const ids = (b: GraphqlBody<{ ObservationList: { id: string }[] }>) => b.data?.ObservationList.map((o) => o.id);
    const expected = observations
      .map((o) => o.id)
      .sort()
      .reverse();
    expect(ids(await c.gql<{ ObservationList: { id: string }[] }>(q('')))).toEqual(expected);
    expect(ids(await c.gql<{ ObservationList: { id: string }[] }>(q(', _count: 2, _offset: 1')))).toEqual(
      expected.slice(1, 3),
    );
  });

  it('an invalid search value is an error naming the parameter', async () => {
    const body = await c.gql('{ ObservationList(date: "not-a-date") { id } }');
    expect(body.data?.ObservationList).toBeNull();
    expect(body.errors?.[0].extensions?.status).toBe(400);
  });

  it('connections page with first/next/previous/last cursors, count and offset', async () => {
    const family = `Pager${TAG}`;
    await c.postAll(
      ['a', 'b', 'c', 'd', 'e'].map(
        (given) => ({ resourceType: 'Patient', name: [{ family, given: [given] }] }) as Resource,
      ),
    );
    interface Page {
      count: number;
      offset: number;
      next: string | null;
      previous: string | null;
      first: string;
      last: string;
      edges: { mode: string; resource: Named }[];
    }
    const page = async (args: string) =>
      (
        await c.gql<{ PatientConnection: Page }>(
          `{ PatientConnection(${args}) { count offset pagesize first previous next last edges { mode score resource { name { given } } } } }`,
        )
      ).data!.PatientConnection;
    const p1 = await page(`family: "${family}", _count: 2, _sort: "given"`);
    expect(p1).toMatchObject({ count: 5, offset: 0, pagesize: 2, previous: null });
    expect(p1.edges.map((e) => [e.mode, e.resource.name[0].given?.[0]])).toEqual([
      ['match', 'a'],
      ['match', 'b'],
    ]);
    const p2 = await page(`_cursor: "${p1.next}"`);
    expect(p2.offset).toBe(2);
    expect(p2.edges.map((e) => e.resource.name[0].given?.[0])).toEqual(['c', 'd']);
    const p3 = await page(`_cursor: "${p2.next}"`);
    expect(p3.edges.map((e) => e.resource.name[0].given?.[0])).toEqual(['e']);
    expect(p3.next).toBeNull();
    const back = await page(`_cursor: "${p3.previous}"`);
    expect(back.edges.map((e) => e.resource.name[0].given?.[0])).toEqual(['c', 'd']);
    const last = await page(`_cursor: "${p1.last}"`);
    expect(last.offset).toBe(4);
    expect(last.edges.map((e) => e.resource.name[0].given?.[0])).toEqual(['e']);
    const first = await page(`_cursor: "${p3.first}"`);
    expect(first.edges.map((e) => e.resource.name[0].given?.[0])).toEqual(['a', 'b']);
  });

  it('a cursor from another type or a forged one is a 400 error', async () => {
    const p = (await c.gql<{ PatientConnection: { next: string } }>(`{ PatientConnection(_count: 1) { next } }`)).data
      ?.PatientConnection;
    const wrongType = await c.gql(`{ ObservationConnection(_cursor: "${p?.next}") { count } }`);
    expect(wrongType.errors?.[0].extensions?.status).toBe(400);
    const forged = await c.gql(`{ PatientConnection(_cursor: "garbage") { count } }`);
    expect(forged.errors?.[0].message).toMatch(/_cursor/);
  });
});

describe('references', () => {
  it('resolves references with inline fragments (spec: resource references)', async () => {
    const body = await c.gql(`{
      Observation(id: "${observations[0].id}") {
        id
        subject { reference resource { ... on Patient { birthDate name(use: official) { family } } ... on Practitioner { id } } }
        performer { resource { __typename ... on Practitioner { name { family } } } }
        code { coding { system code } }
      }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.Observation).toEqual({
      id: observations[0].id,
      subject: {
        reference: `Patient/${patient.id}`,
        resource: { birthDate: '1974-12-25', name: [{ family: 'Chalmers' }] },
      },
      performer: [{ resource: { __typename: 'Practitioner', name: [{ family: 'Careful' }] } }],
      code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
    });
  });

  it('resolves contained (#id), absolute local and versioned references; type filters', async () => {
    const base = t.baseUrl + 'fhir/R4/';
    const obs = await c.post({
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'refs' },
      contained: [{ resourceType: 'Practitioner', id: 'p1', name: [{ family: 'Inside' }] }],
      performer: [{ reference: '#p1' }, { reference: `${base}Practitioner/${practitioner.id}` }],
      subject: { reference: `Patient/${patient.id}/_history/1` },
      focus: [{ reference: `Patient/${patient.id}` }, { reference: `Practitioner/${practitioner.id}` }],
    } as Resource);
    const body = await c.gql(`{ Observation(id: "${obs.id}") {
      performer { resource { ... on Practitioner { id name { family } } } }
      subject { resource { ... on Patient { id } } }
      focus { resource(type: "Patient") { ... on Patient { id } } }
    } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.Observation).toEqual({
      performer: [
        { resource: { id: 'p1', name: [{ family: 'Inside' }] } },
        { resource: { id: practitioner.id, name: [{ family: 'Careful' }] } },
      ],
      subject: { resource: { id: patient.id } },
      focus: [{ resource: { id: patient.id } }, { resource: null }],
    });
  });

  it('an unresolvable reference is an error unless optional: true', async () => {
    const obs = await c.post({
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'dangling' },
      subject: { reference: 'Patient/not-here' },
      focus: [{ reference: 'http://elsewhere.example.org/fhir/Patient/1' }],
    } as Resource);
    const strict = await c.gql(`{ Observation(id: "${obs.id}") { subject { resource { ... on Patient { id } } } } }`);
    expect(strict.data).toEqual({ Observation: { subject: { resource: null } } });
    expect(strict.errors?.[0].path).toEqual(['Observation', 'subject', 'resource']);
    expect(strict.errors?.[0].message).toMatch(/could not be resolved/);
    const optional = await c.gql(`{ Observation(id: "${obs.id}") {
      subject { resource(optional: true) { ... on Patient { id } } }
      focus { reference resource(optional: true) { ... on Patient { id } } }
    } }`);
    expect(optional.errors).toBeUndefined();
    expect(optional.data).toEqual({
      Observation: {
        subject: { resource: null },
        focus: [{ reference: 'http://elsewhere.example.org/fhir/Patient/1', resource: null }],
      },
    });
  });

  it('reverse references: lists of resources referring to the focus (spec: reverse references)', async () => {
    const body = await c.gql<{
      Patient: { final: { id: string }[]; all: { id: string }[] };
    }>(`{ Patient(id: "${patient.id}") {
      id
      final: ObservationList(_reference: subject, status: "final", code: "http://loinc.org|", _sort: "_id") { id }
      all: ObservationList(_reference: patient) { id }
    } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.Patient.final.map((o) => o.id)).toEqual([observations[0].id, observations[1].id].sort());
    expect(body.data?.Patient.all.length).toBeGreaterThanOrEqual(3);
    const viaPerformer = await c.gql(
      `{ Practitioner(id: "${practitioner.id}") { ObservationList(_reference: performer, _count: 1) { id } } }`,
    );
    expect(viaPerformer.data).toEqual({ Practitioner: { ObservationList: [{ id: expect.any(String) }] } });
  });

  it('reverse connections: a page with count and cursors, followed at the root (spec: reverse references)', async () => {
    // Reverse connections take the control arguments; search parameters go through _filter.
    const loincCodes = ['8867-4', '8310-5', '9279-1'].map((code) => `code eq http://loinc.org|${code}`).join(' or ');
    interface Page {
      count: number;
      next: string | null;
      edges: { mode: string; resource: { id: string } }[];
    }
    const body = await c.gql<{ Patient: { ObservationConnection: Page } }>(`{ Patient(id: "${patient.id}") {
      ObservationConnection(_reference: subject, _filter: "${loincCodes}", _sort: "_id", _count: 2) {
        count next edges { mode resource { id } }
      }
    } }`);
    expect(body.errors).toBeUndefined();
    const sorted = observations.map((o) => o.id).sort();
    const first = body.data!.Patient.ObservationConnection;
    expect(first.count).toBe(3);
    expect(first.edges).toEqual(sorted.slice(0, 2).map((id) => ({ mode: 'match', resource: { id } })));
    const rest = await c.gql<{ ObservationConnection: Page }>(
      `{ ObservationConnection(_cursor: "${first.next}") { next edges { resource { id } } } }`,
    );
    expect(rest.data?.ObservationConnection.edges.map((e) => e.resource.id)).toEqual(sorted.slice(2));
    expect(rest.data?.ObservationConnection.next).toBeNull();
    // A cursor is not an argument of a nested connection.
    const nested = await c.gql(
      `{ Patient(id: "${patient.id}") { ObservationConnection(_reference: subject, _cursor: "${first.next}") { count } } }`,
    );
    expect(nested.errors?.[0].message).toMatch(/_cursor/);
  });

  it('reverse lists take the list arguments, fhirpath included', async () => {
    const body = await c.gql<{ Patient: { ObservationList: { id: string }[] } }>(`{ Patient(id: "${patient.id}") {
      ObservationList(_reference: subject, status: [final, preliminary], fhirpath: "value.value < 61") { id }
    } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.Patient.ObservationList).toEqual([{ id: observations[0].id }]);
  });

  it('a _reference parameter that cannot point at the focus type is an error', async () => {
    const body = await c.gql(`{ Patient(id: "${patient.id}") { ObservationList(_reference: device) { id } } }`);
    expect(body.errors?.[0].message).toMatch(/Observation.device cannot refer to a Patient/);
  });
});

describe('field arguments', () => {
  it('filters lists by a child value, bare codes allowed (name(use: official))', async () => {
    const body = await c.gql(`{ Patient(id: "${patient.id}") {
      official: name(use: official) { given family }
      phones: telecom(system: phone) { value }
      given: name(given: "Jim") { use }
      firstTwo: name(_count: 2) { use }
      skipOne: name(_offset: 1, _count: 1) { use }
      withFamily: name(fhirpath: "family.exists()") { family }
      windsor: name(fhirpath: "family = 'Windsor'", _count: 1) { use }
    } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.Patient).toEqual({
      official: [{ given: ['Peter', 'James'], family: 'Chalmers' }],
      phones: [{ value: '(03) 5555 6473' }],
      given: [{ use: 'usual' }],
      firstTwo: [{ use: 'official' }, { use: 'usual' }],
      skipOne: [{ use: 'usual' }],
      withFamily: [{ family: 'Chalmers' }, { family: 'Windsor' }],
      windsor: [{ use: 'maiden' }],
    });
  });
});
