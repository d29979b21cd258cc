import { Alert, Anchor, Button, Code, Container, Group, List, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'react-router';

/**
 * `/docs/*` when the server has no documentation site to serve: it serves apps/docs/build at
 * /docs/ once `npm run docs` has built it (docs-static/plugin.ts), and otherwise the app answers
 * the path. Says why the guide is not here and how to get it, instead of taking "docs" for a
 * resource type.
 */
export function GuidesNotBuiltPage(): ReactNode {
  const { pathname } = useLocation();
  const page = pathname.replace(/^\/docs\/?/, '').replace(/\/+$/, '') || 'index';
  return (
    <Container size="sm" py="xl" component="main">
      <Stack>
        <Title order={1}>The guides are not built on this server</Title>
        <Alert color="blue" title={`No guide at ${pathname}`}>
          This server serves the documentation site at <Code>/docs/</Code> once it has been built.
        </Alert>
        <Text>To read the guides here:</Text>
        <List type="ordered">
          <List.Item>
            In the Hearth checkout, run <Code>npm run docs</Code> (the first run installs the site&apos;s own
            dependencies).
          </List.Item>
          <List.Item>Restart the server, then open this page again.</List.Item>
        </List>
        <Text>
          The same guide is also plain Markdown in the repository: <Code>{`docs/${page}.md`}</Code>
          {page.includes('/') || page === 'index' ? '' : ` (or docs/${page}/index.md)`}.
        </Text>
        <Group>
          <Button component={Link} to="/">
            Home
          </Button>
          <Anchor href="/fhir/R4/metadata">The API&apos;s CapabilityStatement</Anchor>
        </Group>
      </Stack>
    </Container>
  );
}
