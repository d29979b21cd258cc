import 'graphiql/style.css';
import { Box } from '@mantine/core';
import { useHearth } from '@hearth/react';
import { GraphiQL, type GraphiQLProps } from 'graphiql';
import { useMemo, type ReactNode } from 'react';
import { useLocation } from 'react-router';
import { sessionFetcher } from './graphiql-fetcher.js';

export const DEFAULT_GRAPHQL_QUERY = `# FHIR GraphQL (hl7.org/fhir/R4/graphql.html), run as the signed-in user.
{
  PatientList(_count: 5) {
    id
    name { given family }
  }
}
`;

/**
 * `/graphiql`: GraphiQL bundled with the app (a chunk loaded on first visit, no CDN), talking to
 * `/fhir/R4/$graphql` as the signed-in user. `?query=` prefills the editor.
 */
export function GraphiQLPage(): ReactNode {
  const client = useHearth();
  const location = useLocation();
  const fetcher = useMemo(() => sessionFetcher(client) as GraphiQLProps['fetcher'], [client]);
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
