import { Stack, Table, Text, Title } from '@mantine/core';
import { formatDateTime } from '@hearth/core';
import { OperationOutcomeAlert, useAsync, useHearth, useProfile } from '@hearth/react';
import type { ReactNode } from 'react';
import { actionLabel, whatLabel, whoLabel, type TrailEvent } from './audit-entries.js';

/**
 * For a patient signed in to the app: who read or changed their record, and when. The server
 * answers a patient's AuditEvent search with the entries about their own record only.
 */
export function MyAccessLogPage(): ReactNode {
  const client = useHearth();
  const profile = useProfile();
  const isPatient = profile?.resourceType === 'Patient';
  const entries = useAsync<TrailEvent[]>(
    isPatient
      ? async () =>
          (await client.searchResources(
            'AuditEvent',
            { patient: `Patient/${profile?.id}`, _count: '200' },
            { cache: 'no-cache' },
          )) as unknown as TrailEvent[]
      : undefined,
    `${profile?.id}`,
  );
  if (!isPatient) {
    return <Text>This page shows a patient who accessed their own record; sign in as a patient to see it.</Text>;
  }
  return (
    <Stack>
      <Title order={2}>Who accessed my record</Title>
      {entries.error !== undefined && <OperationOutcomeAlert error={entries.error} />}
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            <Table.Th>Who</Table.Th>
            <Table.Th>Did</Table.Th>
            <Table.Th>What</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(entries.data ?? []).map((event) => (
            <Table.Tr key={event.id}>
              <Table.Td>{formatDateTime(event.recorded)}</Table.Td>
              <Table.Td>{whoLabel(event)}</Table.Td>
              <Table.Td>{actionLabel(event)}</Table.Td>
              <Table.Td>{whatLabel(event)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {!entries.loading && (entries.data ?? []).length === 0 && (
        <Text c="dimmed">No one has accessed your record yet.</Text>
      )}
    </Stack>
  );
}
