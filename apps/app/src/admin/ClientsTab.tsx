import { Alert, Button, Code, CopyButton, Group, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import type { ClientApplication } from '@hearth/core';
import { OperationOutcomeAlert, useAction, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';

/** Client applications: the list, and a create form whose answer shows the secret once. */
export function ClientsTab(props: {
  projectId: string;
  clients: ClientApplication[];
  onChanged: () => void;
}): ReactNode {
  const { projectId, clients } = props;
  const client = useHearth();
  const [form, setForm] = useState({ name: '', description: '', redirectUri: '' });
  const [created, setCreated] = useState<ClientApplication | undefined>(undefined);
  const { busy, error, submit } = useAction();
  return (
    <Stack>
      <Table striped aria-label="Client applications">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Client id</Table.Th>
            <Table.Th>Redirect URI</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {clients.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>
                <Link to={`/ClientApplication/${c.id}`}>{c.name ?? c.id}</Link>
              </Table.Td>
              <Table.Td>
                <Code>{c.id}</Code>
              </Table.Td>
              <Table.Td>{c.redirectUri ?? '—'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {created && (
        <Alert color="green" title="Client created" role="status">
          <Stack gap={4}>
            <Text size="sm">
              Client id: <Code>{created.id}</Code>
            </Text>
            <Group gap="xs">
              <Text size="sm">
                Secret: <Code data-testid="client-secret">{created.secret}</Code>
              </Text>
              <CopyButton value={created.secret ?? ''}>
                {({ copied, copy }) => (
                  <Button size="compact-xs" variant="light" onClick={copy}>
                    {copied ? 'Copied' : 'Copy'}
                  </Button>
                )}
              </CopyButton>
            </Group>
            <Text size="xs" c="dimmed">
              Keep the secret now: it is not shown again.
            </Text>
            <Button size="compact-sm" variant="subtle" w="fit-content" onClick={() => setCreated(undefined)}>
              I have saved it
            </Button>
          </Stack>
        </Alert>
      )}
      <Paper withBorder p="md" maw={640}>
        <Title order={4} mb="sm">
          New client
        </Title>
        <form
          onSubmit={submit(async () => {
            const result = await client.createClient(projectId, {
              name: form.name,
              description: form.description || undefined,
              redirectUri: form.redirectUri || undefined,
            });
            setCreated(result);
            setForm({ name: '', description: '', redirectUri: '' });
            props.onChanged();
          })}
        >
          <Stack gap="sm">
            <TextInput
              label="Client name"
              required
              value={form.name}
              onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
            />
            <TextInput
              label="Description"
              value={form.description}
              onChange={(e) => setForm({ ...form, description: e.currentTarget.value })}
            />
            <TextInput
              label="Redirect URI"
              type="url"
              value={form.redirectUri}
              onChange={(e) => setForm({ ...form, redirectUri: e.currentTarget.value })}
            />
            <OperationOutcomeAlert error={error} />
            <Button type="submit" loading={busy} w="fit-content">
              Create client
            </Button>
          </Stack>
        </form>
      </Paper>
    </Stack>
  );
}
