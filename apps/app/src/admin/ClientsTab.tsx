import { Alert, Button, Code, CopyButton, Group, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import type { ClientApplication } from '@hearth/core';
import { useAction, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { useFields } from '../use-fields.js';
import { FormSubmit } from '../components/FormSubmit.js';

/** Client applications: the list, and a create form whose answer shows the secret once. */
export function ClientsTab(props: {
  projectId: string;
  clients: ClientApplication[];
  onChanged: () => void;
}): ReactNode {
  const { projectId, clients } = props;
  const client = useHearth();
  const form = useFields({ name: '', description: '', redirectUri: '' });
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
              name: form.values.name,
              description: form.values.description || undefined,
              redirectUri: form.values.redirectUri || undefined,
            });
            setCreated(result);
            form.setValues({ name: '', description: '', redirectUri: '' });
            props.onChanged();
          })}
        >
          <Stack gap="sm">
            <TextInput label="Client name" required {...form.text('name')} />
            <TextInput label="Description" {...form.text('description')} />
            <TextInput label="Redirect URI" type="url" {...form.text('redirectUri')} />
            <FormSubmit busy={busy} error={error} w="fit-content">
              Create client
            </FormSubmit>
          </Stack>
        </form>
      </Paper>
    </Stack>
  );
}
