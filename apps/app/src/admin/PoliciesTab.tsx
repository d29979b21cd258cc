import { Button, Group, Loader, Modal, Stack, Table } from '@mantine/core';
import type { Resource } from '@hearth/core';
import { JsonEditor, OperationOutcomeAlert, useAsync, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';

const NEW_POLICY: Resource = {
  resourceType: 'AccessPolicy',
  name: 'New policy',
  resource: [{ resourceType: 'Patient' }, { resourceType: 'Observation', readonly: true }],
};

/** Access policies: the list, and editing (or creating) one as JSON. */
export function PoliciesTab(): ReactNode {
  const client = useHearth();
  const list = useAsync<Resource[]>(
    async () => (await client.searchResources('AccessPolicy', { _count: '200' }, { cache: 'no-cache' })) as Resource[],
    'policies',
  );
  const [editing, setEditing] = useState<Resource | undefined>(undefined);
  return (
    <Stack>
      {list.error !== undefined && <OperationOutcomeAlert error={list.error} />}
      {list.loading && !list.data ? (
        <Loader size="sm" aria-label="Loading access policies" />
      ) : (
        <Table striped aria-label="Access policies">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Resource types</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(list.data ?? []).map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>
                  <Link to={`/AccessPolicy/${p.id}`}>{String(p.name ?? p.id)}</Link>
                </Table.Td>
                <Table.Td>
                  {((p.resource as { resourceType?: string }[] | undefined) ?? [])
                    .map((r) => r.resourceType)
                    .join(', ')}
                </Table.Td>
                <Table.Td>
                  <Button size="compact-sm" variant="light" onClick={() => setEditing(p)}>
                    Edit
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Group>
        <Button onClick={() => setEditing(NEW_POLICY)}>New access policy</Button>
      </Group>
      <Modal
        opened={!!editing}
        onClose={() => setEditing(undefined)}
        title={editing?.id ? 'Edit access policy' : 'New access policy'}
        size="xl"
      >
        {editing && (
          <JsonEditor
            defaultValue={editing}
            label="Access policy"
            onSubmit={async (policy) => {
              if (policy.id) await client.updateResource(policy as never);
              else await client.createResource(policy as never);
              setEditing(undefined);
              list.reload();
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}
