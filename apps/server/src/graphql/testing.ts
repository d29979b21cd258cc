import type { LightMyRequestResponse } from 'fastify';
import type { Resource } from '@hearth/core';
import type { TestApp } from '../test/app.js';

/** Helpers of the GraphQL tests: REST writes to set data up, `$graphql` calls to check it. */
export interface GraphqlTestClient {
  post<T extends Resource>(resource: T): Promise<T & { id: string }>;
  /** Creates many resources in one transaction Bundle; `urn:uuid:<n>` references between them work. */
  postAll(resources: Resource[]): Promise<(Resource & { id: string })[]>;
  /** POSTs a query; the raw response. */
  raw(query: string, variables?: Record<string, unknown>, url?: string): Promise<LightMyRequestResponse>;
  /** POSTs a query expecting 200; the parsed body ({ data, errors }), its data of the shape the test expects. */
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    url?: string,
  ): Promise<GraphqlBody<T>>;
}

export interface GraphqlBody<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { status?: number; outcome?: Resource } }[];
}

export function graphqlTestClient(
  t: TestApp,
  headers: () => Record<string, string> = () => t.authHeaders,
): GraphqlTestClient {
  const client: GraphqlTestClient = {
    async post(resource) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/fhir/R4/${resource.resourceType}`,
        headers: { ...headers(), 'content-type': 'application/fhir+json' },
        payload: resource,
      });
      if (res.statusCode !== 201) {
        throw new Error(`create ${resource.resourceType}: ${res.statusCode} ${res.body}`);
      }
      return res.json();
    },
    async postAll(resources) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/fhir/R4',
        headers: { ...headers(), 'content-type': 'application/fhir+json' },
        payload: {
          resourceType: 'Bundle',
          type: 'transaction',
          entry: resources.map((resource, i) => ({
            fullUrl: `urn:uuid:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
            resource,
            request: { method: 'POST', url: resource.resourceType },
          })),
        },
      });
      if (res.statusCode !== 200) {
        throw new Error(`transaction: ${res.statusCode} ${res.body}`);
      }
      const bundle = res.json() as { entry: { response: { location: string } }[] };
      return bundle.entry.map((e, i) => ({ ...resources[i], id: e.response.location.split('/')[1] }));
    },
    raw(query, variables, url = '/fhir/R4/$graphql') {
      return t.app.inject({ method: 'POST', url, headers: headers(), payload: { query, variables } });
    },
    async gql<T>(query: string, variables?: Record<string, unknown>, url?: string): Promise<GraphqlBody<T>> {
      const res = await client.raw(query, variables, url);
      if (res.statusCode !== 200) {
        throw new Error(`$graphql: ${res.statusCode} ${res.body}`);
      }
      expect200Json(res);
      return res.json() as GraphqlBody<T>;
    },
  };
  return client;
}

function expect200Json(res: LightMyRequestResponse): void {
  const type = String(res.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) {
    throw new Error(`$graphql answered ${type}, not application/json`);
  }
}

/** The `urn:uuid` fullUrl `postAll` gives its n-th resource, for references between them. */
export function urn(n: number): string {
  return `urn:uuid:00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

/** Shapes of results the tests navigate. */
export interface NameNode {
  use?: string | null;
  given?: string[] | null;
  family?: string | null;
}
export interface Named {
  id?: string;
  name: NameNode[];
}
