import { Paper, Stack, Table, TextInput, Title } from '@mantine/core';
import type { Bot } from '@hearth/core';
import { useAction, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';
import { FormSubmit } from '../components/FormSubmit.js';

/** Bots: the list and a create form (POST /admin/projects/{id}/bot), opening the editor. */
export function BotsTab({ projectId, bots }: { projectId: string; bots: Bot[] }): ReactNode {
  const client = useHearth();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const { busy, error, submit } = useAction();
  return (
    <Stack>
      <Table striped aria-label="Bots">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Description</Table.Th>
            <Table.Th>Runtime</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {bots.map((b) => (
            <Table.Tr key={b.id}>
              <Table.Td>
                <Link to={`/admin/bots/${b.id}`}>{b.name ?? b.id}</Link>
              </Table.Td>
              <Table.Td>{b.description ?? ''}</Table.Td>
              <Table.Td>{b.runtimeVersion ?? ''}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Paper withBorder p="md" maw={640}>
        <Title order={4} mb="sm">
          New bot
        </Title>
        <form
          onSubmit={submit(async () => {
            const bot = await client.createBot(projectId, { name, description: description || undefined });
            navigate(`/admin/bots/${bot.id}`);
          })}
        >
          <Stack gap="sm">
            <TextInput label="Bot name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <TextInput
              label="Description"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
            />
            <FormSubmit busy={busy} error={error} w="fit-content">
              Create bot
            </FormSubmit>
          </Stack>
        </form>
      </Paper>
    </Stack>
  );
}
