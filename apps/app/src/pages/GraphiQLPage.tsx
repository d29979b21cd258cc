import 'graphiql/style.css';
import { Box } from '@mantine/core';
import { OperationOutcomeError } from '@hearth/core';
import { useHearth } from '@hearth/react';
import { GraphiQL, type GraphiQLProps } from 'graphiql';
import { useMemo, type ReactNode } from 'react';
import { useLocation } from 'react-router';

export const DEFAULT_GRAPHQL_QUERY = `# FHIR GraphQL (hl7.org/fhir/R4/graphql.html), run as the signed-in user.
{
  PatientList(_count: 5) {
    id
    name { given family }
  }
}
`;

type Fetcher = GraphiQLProps['fetcher'];

/**
 * The fetcher GraphiQL runs queries (and its schema introspection) through: POST $graphql with the
 * session's token, renewed by the client as needed. A refused request (an OperationOutcome)
 * becomes a GraphQL error, so that its message shows in the result pane.
 */
export function sessionFetcher(client: ReturnType<typeof useHearth>): Fetcher {
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

/**
 * `/graphiql`: GraphiQL bundled with the app (a chunk loaded on first visit, no CDN), talking to
 * `/fhir/R4/$graphql` as the signed-in user. `?query=` prefills the editor.
 */
export function GraphiQLPage(): ReactNode {
  const client = useHearth();
  const location = useLocation();
  const fetcher = useMemo(() => sessionFetcher(client), [client]);
  const query = new URLSearchParams(location.search).get('query') ?? undefined;
  return (
    // The shell's header (56px) and padding (2 × 16px) surround the editor.
    <Box h="calc(100vh - 56px - 32px)" mih={480} aria-label="GraphiQL" role="region">
      <GraphiQL
        fetcher={fetcher}
        defaultQuery={DEFAULT_GRAPHQL_QUERY}
        query={query}
        isHeadersEditorEnabled={false}
        shouldPersistHeaders={false}
      />
    </Box>
  );
}
