import type { FastifyInstance } from 'fastify';

/** Pinned versions of the GraphiQL page's scripts (the last GraphiQL with a browser bundle). */
const GRAPHIQL = 'https://unpkg.com/graphiql@3.8.3';
const REACT = 'https://unpkg.com/react@18.3.1/umd/react.production.min.js';
const REACT_DOM = 'https://unpkg.com/react-dom@18.3.1/umd/react-dom.production.min.js';

const DEFAULT_QUERY = `# FHIR GraphQL (hl7.org/fhir/R4/graphql.html). Set the Authorization header below,
# or open this page as $graphiql#access_token=<token>.
{
  PatientList(_count: 5) {
    id
    name { given family }
  }
}
`;

/**
 * The GraphiQL page for the `$graphql` endpoint at `endpoint` (a URL or path). The web app can
 * serve this HTML as is, or mount GraphiQL itself with the same endpoint. An access token in
 * the page's fragment (`#access_token=...`, never sent to the server) becomes the
 * Authorization header; otherwise set it in the headers editor.
 */
export function graphiqlHtml(endpoint: string): string {
  const config = JSON.stringify({ endpoint, query: DEFAULT_QUERY }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Hearth GraphiQL</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${GRAPHIQL}/graphiql.min.css">
<style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="graphiql">Loading GraphiQL...</div>
<script crossorigin src="${REACT}"></script>
<script crossorigin src="${REACT_DOM}"></script>
<script crossorigin src="${GRAPHIQL}/graphiql.min.js"></script>
<script>
  const config = ${config};
  const token = new URLSearchParams(location.hash.slice(1)).get('access_token');
  const headers = token ? { Authorization: 'Bearer ' + token } : {};
  if (token) history.replaceState(null, '', location.pathname + location.search);
  const fetcher = GraphiQL.createFetcher({ url: config.endpoint, headers });
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, {
      fetcher,
      defaultQuery: config.query,
      headers: token ? '' : JSON.stringify({ Authorization: 'Bearer ' }, null, 2),
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
    }),
  );
</script>
</body>
</html>
`;
}

/** Serves the GraphiQL page at `$graphiql`, next to `$graphql` (registered under the FHIR prefix). */
export async function graphiqlRoutes(app: FastifyInstance): Promise<void> {
  app.get('/$graphiql', async (_request, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header(
        'content-security-policy',
        "default-src 'self'; script-src 'self' 'unsafe-inline' https://unpkg.com; style-src 'self' 'unsafe-inline' https://unpkg.com; img-src 'self' data:; connect-src 'self'",
      )
      .send(graphiqlHtml('$graphql')),
  );
}
