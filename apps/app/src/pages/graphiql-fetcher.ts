import { OperationOutcomeError, type HearthClient } from '@hearth/core';

export interface GraphiQLParams {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

/**
 * The fetcher GraphiQL runs queries (and its schema introspection) through: POST $graphql with the
 * session's token, renewed by the client as needed. A refused request (an OperationOutcome)
 * becomes a GraphQL error, so that its message shows in the result pane.
 */
export function sessionFetcher(
  client: HearthClient,
): (params: GraphiQLParams, opts?: { headers?: Record<string, unknown> }) => Promise<unknown> {
  return async (params, opts) => {
    try {
      return await client.graphql(params.query, params.operationName ?? undefined, params.variables ?? undefined, {
        headers: opts?.headers as Record<string, string> | undefined,
      });
    } catch (err) {
      const message = err instanceof OperationOutcomeError ? err.message : String(err);
      return { errors: [{ message }] };
    }
  };
}
