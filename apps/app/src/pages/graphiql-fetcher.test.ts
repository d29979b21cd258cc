import { HearthClient, MemoryStorage } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { sessionFetcher } from './graphiql-fetcher.js';

function clientAnswering(status: number, body: unknown, seen: { url: string; init?: RequestInit }[]): HearthClient {
  const fetch = async (url: string, init?: RequestInit) => {
    seen.push({ url, init });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return new HearthClient({ baseUrl: 'http://hearth.test/', fetch, storage: new MemoryStorage() });
}

describe('GraphiQL session fetcher', () => {
  it('posts the query, operation and variables to $graphql and returns the answer', async () => {
    const seen: { url: string; init?: RequestInit }[] = [];
    const answer = { data: { PatientList: [{ id: 'p1' }] } };
    const fetcher = sessionFetcher(clientAnswering(200, answer, seen));
    expect(
      await fetcher({
        query: 'query Q($n: String) { PatientList(name: $n) { id } }',
        operationName: 'Q',
        variables: { n: 'Ada' },
      }),
    ).toEqual(answer);
    expect(seen[0].url).toBe('http://hearth.test/fhir/R4/$graphql');
    expect(seen[0].init?.method).toBe('POST');
    expect(JSON.parse(String(seen[0].init?.body))).toEqual({
      query: 'query Q($n: String) { PatientList(name: $n) { id } }',
      operationName: 'Q',
      variables: { n: 'Ada' },
    });
  });

  it("turns a refusal into a GraphQL error carrying the server's message", async () => {
    const fetcher = sessionFetcher(
      clientAnswering(
        400,
        {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'invalid', details: { text: 'The request has no GraphQL query' } }],
        },
        [],
      ),
    );
    expect(await fetcher({ query: ' ' })).toEqual({ errors: [{ message: 'The request has no GraphQL query' }] });
  });
});
