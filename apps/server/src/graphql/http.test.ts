/** $graphql over HTTP: request forms, malformed input, limits, directives, batching, GraphiQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import type { Resource } from '@hearth/core';
import { findAppDist } from '../app-static/plugin.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { graphqlTestClient, urn, type GraphqlTestClient, type Named } from './testing.js';

let t: TestApp;
let c: GraphqlTestClient;
let patient: Resource & { id: string };

beforeAll(async () => {
  t = await createTestApp({
    config: {
      graphqlMaxDepth: 12,
      graphqlMaxCost: 5000,
      // The query-count test counts the SQL of $graphql alone: sessions stay cached, no rate counters.
      authCacheMs: 600_000,
      rateLimitRequestsPerMinute: 0,
      rateLimitIpRequestsPerMinute: 0,
    },
  });
  c = graphqlTestClient(t);
  patient = await c.post({
    resourceType: 'Patient',
    name: [
      { use: 'official', family: 'Chalmers', given: ['Peter', 'James'] },
      { use: 'usual', given: ['Jim'] },
    ],
    telecom: [{ system: 'phone', value: '555-1' }],
  } as Resource);
});
afterAll(async () => {
  await t?.close();
});

const url = '/fhir/R4/$graphql';
const json = (payload: unknown) => ({
  method: 'POST' as const,
  url,
  headers: { ...t.authHeaders, 'content-type': 'application/json' },
  payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
});

describe('requests', () => {
  it('accepts GET with query, variables and operationName', async () => {
    const query = 'query One($id: ID!) { Patient(id: $id) { id } } query Two { PatientList(_count: 1) { id } }';
    const params = new URLSearchParams({ query, variables: JSON.stringify({ id: patient.id }), operationName: 'One' });
    const res = await t.app.inject({ url: `${url}?${params}`, headers: t.authHeaders });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ data: { Patient: { id: patient.id } } });
  });

  it('accepts an application/graphql body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...t.authHeaders, 'content-type': 'application/graphql' },
      payload: `{ Patient(id: "${patient.id}") { id } }`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.Patient.id).toBe(patient.id);
  });

  it('answers malformed requests with a 400 OperationOutcome', async () => {
    for (const payload of [
      '{"query": ',
      { variables: {} },
      { query: 42 },
      { query: '   ' },
      { query: '{ __typename }', variables: [1] },
    ]) {
      const res = await t.app.inject(json(payload));
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().resourceType).toBe('OperationOutcome');
    }
    const badVariables = await t.app.inject({
      url: `${url}?query=${encodeURIComponent('{ __typename }')}&variables=%7Bnope`,
      headers: t.authHeaders,
    });
    expect(badVariables.statusCode).toBe(400);
    expect(badVariables.json().issue[0].expression).toEqual(['variables']);
    const text = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...t.authHeaders, 'content-type': 'text/plain' },
      payload: '{ x }',
    });
    expect(text.statusCode).toBe(400);
  });

  it('answers syntax, validation and variable errors in `errors` with 200', async () => {
    const syntax = await c.gql('{ Patient(id: "x" { id } }');
    expect(syntax.data).toBeUndefined();
    expect(syntax.errors?.[0].message).toMatch(/Syntax Error/);
    const unknown = await c.gql('{ PatientList { nickname } }');
    expect(unknown.errors?.[0].message).toMatch(/Cannot query field "nickname" on type "Patient"/);
    const variable = await c.gql('query($id: ID!) { Patient(id: $id) { id } }', {});
    expect(variable.errors?.[0].message).toMatch(/\$id/);
  });

  it('sends mutations only by POST (405 for GET)', async () => {
    const query = encodeURIComponent('mutation { PatientDelete(id: "x") { id } }');
    const res = await t.app.inject({ url: `${url}?query=${query}`, headers: t.authHeaders });
    expect(res.statusCode).toBe(405);
    expect(res.json().resourceType).toBe('OperationOutcome');
  });

  it('requires a signed-in caller', async () => {
    const res = await t.app.inject({ method: 'POST', url, payload: { query: '{ __typename }' } });
    expect(res.statusCode).toBe(401);
  });

  it('answers introspection (on by default) and lists every resource type', async () => {
    interface Names {
      name: string;
    }
    const body = await c.gql<{
      __schema: { queryType: Names; mutationType: Names; directives: Names[] };
      __type: { fields: Names[] };
    }>(
      '{ __schema { queryType { name } mutationType { name } directives { name } } __type(name: "Patient") { fields { name } } }',
    );
    expect(body.data?.__schema.queryType.name).toBe('Query');
    expect(body.data?.__schema.directives.map((d) => d.name)).toEqual(
      expect.arrayContaining(['flatten', 'first', 'singleton']),
    );
    const fields = body.data?.__type.fields.map((f) => f.name);
    expect(fields).toEqual(
      expect.arrayContaining(['name', 'birthDate', '_birthDate', 'deceasedBoolean', 'ObservationList']),
    );
    const platform = await c.gql<{ __type: { fields: Names[] } }>('{ __type(name: "Query") { fields { name } } }');
    const roots = platform.data?.__type.fields.map((f) => f.name);
    expect(roots).toEqual(
      expect.arrayContaining(['Patient', 'PatientList', 'PatientConnection', 'ProjectMembership', 'BotList']),
    );
  });
});

describe('introspection', () => {
  it("answers GraphiQL's full introspection query, once computed per process", async () => {
    const query = getIntrospectionQuery({
      descriptions: true,
      inputValueDeprecation: true,
      directiveIsRepeatable: true,
    });
    const first = await c.raw(query);
    expect(first.statusCode).toBe(200);
    // A bound on the schema's size: GraphiQL downloads and parses all of it.
    expect(first.body.length).toBeLessThan(22_000_000);
    const schema = buildClientSchema((first.json() as { data: IntrospectionQuery }).data);
    expect(schema.getQueryType()?.getFields().PatientConnection).toBeDefined();
    const started = performance.now();
    const second = await c.raw(query);
    console.log(
      `introspection: ${(first.body.length / 1e6).toFixed(1)} MB; again in ${(performance.now() - started).toFixed(0)} ms`,
    );
    expect(second.body).toBe(first.body);
  });
});

describe('limits', () => {
  it('a query deeper than graphqlMaxDepth is a 400 OperationOutcome', async () => {
    const deep = 'item { '.repeat(12) + 'linkId' + ' }'.repeat(12);
    const res = await t.app.inject(json({ query: `{ QuestionnaireList { ${deep} } }` }));
    expect(res.statusCode).toBe(400);
    expect(res.json().issue[0].details.text).toMatch(/14 fields deep; the most this server allows is 12/);
  });

  it('a query costlier than graphqlMaxCost is a 400 OperationOutcome; variables count', async () => {
    const query =
      'query($n: Int) { PatientList(_count: 100) { ObservationList(_reference: subject, _count: $n) { id } } }';
    const over = await t.app.inject(json({ query, variables: { n: 100 } }));
    expect(over.statusCode).toBe(400);
    expect(over.json().issue[0].code).toBe('too-costly');
    expect(over.json().issue[0].details.text).toMatch(/estimated cost is 10201/);
    const under = await t.app.inject(json({ query, variables: { n: 10 } }));
    expect(under.statusCode).toBe(200);
  });
});

describe('directives (hl7.org/fhir/R4/graphql.html#directives)', () => {
  it('@flatten puts children in the parent, as lists', async () => {
    const body = await c.gql(`{ Patient(id: "${patient.id}") { id name @flatten { given family } } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.Patient).toEqual({ id: patient.id, given: ['Peter', 'James', 'Jim'], family: ['Chalmers'] });
  });

  it('@first takes the first item; @singleton makes one value, and more than one is an error', async () => {
    const body = await c.gql(`{ Patient(id: "${patient.id}") {
      first: name @first { given }
      official: name(use: official) @flatten { family @singleton given @first }
      telecom @flatten { phone: value @singleton }
    } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.Patient).toEqual({
      first: { given: ['Peter', 'James'] },
      family: 'Chalmers',
      // @first takes the first given of each (flattened) name: still a list (spec).
      given: ['Peter'],
      phone: '555-1',
    });
    const tooMany = await c.gql(`{ Patient(id: "${patient.id}") { name @flatten { given @singleton } } }`);
    expect(tooMany.errors?.[0].message).toMatch(/@singleton: "given" has 3 values/);
    expect(tooMany.data).toEqual({ Patient: { given: 'Peter' } });
  });

  it('@slice reads elements the query does not select, on search lists too; a bad path is an error', async () => {
    const body = await c.gql(`{
      PatientList(_id: "${patient.id}") @slice(path: "name.first().use") { id }
      Patient(id: "${patient.id}") { telecom @slice(path: system) { value } }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      'PatientList.official': { id: patient.id },
      Patient: { 'telecom.phone': { value: '555-1' } },
    });
    const bad = await c.gql(`{ Patient(id: "${patient.id}") { name @slice(path: "use..") { family } } }`);
    expect(bad.errors?.[0].message).toMatch(/@slice/);
  });

  it('work through fragments and aliases, at any depth', async () => {
    const body = await c.gql(`
      query { PatientList(_id: "${patient.id}") @flatten { ...names } }
      fragment names on Patient { n: name @first @flatten { given family } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ family: ['Chalmers'], given: ['Peter', 'James'] });
  });
});

describe('batched loading', () => {
  /** Runs fn counting the SQL statements sent through the pool (with its duration). */
  async function countQueries<T>(fn: () => Promise<T>): Promise<{ result: T; queries: number; ms: number }> {
    const original = t.pool.query;
    let queries = 0;
    (t.pool as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
      queries++;
      return (original as (...a: unknown[]) => unknown).apply(t.pool, args);
    };
    try {
      const started = performance.now();
      const result = await fn();
      return { result, queries, ms: performance.now() - started };
    } finally {
      (t.pool as { query: unknown }).query = original;
    }
  }

  const PATIENTS = 10;
  beforeAll(async () => {
    const resources: Resource[] = [];
    for (let i = 0; i < PATIENTS; i++) {
      resources.push({ resourceType: 'Patient', name: [{ family: `Batch${i}` }] } as Resource);
    }
    for (let i = 0; i < 100; i++) {
      resources.push({
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'batch' },
        identifier: [{ system: 'urn:batch', value: String(i) }],
        subject: { reference: urn(i % PATIENTS) },
        performer: [{ reference: urn((i + 1) % PATIENTS) }],
      } as Resource);
    }
    await c.postAll(resources);
  });

  it('a list of observations with their subjects costs a bounded number of queries', async () => {
    type Body = { ObservationList: { subject: { resource: Named } }[] };
    const run = (n: number) =>
      countQueries(async () => {
        const body = await c.gql<Body>(`{ ObservationList(identifier: "urn:batch|", _count: ${n}) {
          id subject { resource { ... on Patient { name { family } } } } performer { resource { ... on Patient { id } } }
        } }`);
        expect(body.errors).toBeUndefined();
        expect(body.data?.ObservationList).toHaveLength(n);
        expect(body.data?.ObservationList.every((o) => o.subject.resource.name[0].family?.startsWith('Batch'))).toBe(
          true,
        );
      });
    await run(10); // warm: the project's search parameters
    // The fewer of two runs: the pool also serves the process's own timers (a background query
    // landing in the window is not the request's).
    const fewer = async (n: number) => {
      const [a, b] = [await run(n), await run(n)];
      return a.queries <= b.queries ? a : b;
    };
    const ten = await fewer(10);
    const hundred = await fewer(100);
    console.log(
      `GraphQL list with subjects: 10 → ${ten.queries} queries (${ten.ms.toFixed(0)} ms), 100 → ${hundred.queries} queries (${hundred.ms.toFixed(0)} ms)`,
    );
    // One search, one read of the Patients for both reference fields (same type, one batch).
    expect(hundred.queries).toBe(ten.queries);
    expect(hundred.queries).toBeLessThanOrEqual(3);
  });

  it('reverse references inside a list are one search for the whole list, split exactly', async () => {
    type Lists = { PatientList: { id: string; ObservationList: { id: string }[] }[] };
    const batched = (count: number) =>
      c.gql<Lists>(`{ PatientList(family: "Batch", _sort: "_id") {
        id ObservationList(_reference: subject, _count: ${count}, _sort: "_id") { id }
      } }`);
    const { result, queries, ms } = await countQueries(() => batched(20));
    console.log(`GraphQL ${PATIENTS} patients with their observations: ${queries} queries (${ms.toFixed(0)} ms)`);
    expect(result.errors).toBeUndefined();
    expect(queries).toBeLessThanOrEqual(2);
    expect(result.data?.PatientList.map((p) => p.ObservationList.length)).toEqual(new Array(PATIENTS).fill(10));
    // A page cut short (3 each of 10 each): the same lists as one search per patient.
    const cut = await batched(3);
    expect(cut.errors).toBeUndefined();
    for (const patient of cut.data!.PatientList) {
      const alone = await c.gql<{ Patient: { ObservationList: { id: string }[] } }>(
        `{ Patient(id: "${patient.id}") { ObservationList(_reference: subject, _count: 3, _sort: "_id") { id } } }`,
      );
      expect(patient.ObservationList).toEqual(alone.data?.Patient.ObservationList);
      expect(patient.ObservationList).toHaveLength(3);
    }
  });

  it('a list without _count is all its matches or an error, never silently cut (spec: searching)', async () => {
    // 100 batch observations: more than the default page of 20.
    const root = await c.gql(`{ ObservationList(identifier: "urn:batch|") { id } }`);
    expect(root.data).toEqual({ ObservationList: null });
    expect(root.errors?.[0].extensions?.status).toBe(400);
    expect(root.errors?.[0].message).toMatch(/more than 20 matches: give _count .* or use ObservationConnection/);
    // Each patient has 10 observations: whole lists; with one patient over the page, only its list fails.
    type Lists = { PatientList: { ObservationList: { id: string }[] | null }[] };
    const whole = await c.gql<Lists>(`{ PatientList(family: "Batch", _sort: "_id") {
      ObservationList(_reference: subject) { id }
    } }`);
    expect(whole.errors).toBeUndefined();
    expect(whole.data?.PatientList.map((p) => p.ObservationList?.length)).toEqual(new Array(PATIENTS).fill(10));
    const small = await c.gql<Lists>(`{ PatientList(family: "Batch", _sort: "_id") {
      ObservationList(_reference: subject, _count: 5) { id }
    } }`);
    expect(small.errors).toBeUndefined();
    expect(small.data?.PatientList.map((p) => p.ObservationList?.length)).toEqual(new Array(PATIENTS).fill(5));
    const extra = await c.postAll(
      Array.from(
        { length: 21 },
        (_, i) =>
          ({
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'overflow' },
            identifier: [{ system: 'urn:overflow', value: String(i) }],
            subject: { reference: `Patient/${patient.id}` },
          }) as Resource,
      ),
    );
    expect(extra).toHaveLength(21);
    const mixed = await c.gql<{ a: { ObservationList: unknown[] | null }; b: { ObservationList: unknown[] | null } }>(`{
      a: Patient(id: "${patient.id}") { ObservationList(_reference: subject, identifier: "urn:overflow|", _count: 50) { id } }
      b: Patient(id: "${patient.id}") { ObservationList(_reference: subject) { id } }
    }`);
    expect(mixed.data?.a.ObservationList).toHaveLength(21);
    expect(mixed.data?.b.ObservationList).toBeNull();
    expect(mixed.errors?.[0].path).toEqual(['b', 'ObservationList']);
  });
});

describe('GraphiQL', () => {
  it("$graphiql sends the browser to the web app's GraphiQL page (or says there is none)", async () => {
    const res = await t.app.inject({ url: '/fhir/R4/$graphiql' });
    if (findAppDist()) {
      // This server serves the built app: its GraphiQL page is here.
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe(`${t.baseUrl}graphiql`);
    } else {
      expect(res.statusCode).toBe(404);
      expect(res.json().resourceType).toBe('OperationOutcome');
      expect(res.body).toMatch(/HEARTH_APP_BASE_URL/);
    }
  });
});
