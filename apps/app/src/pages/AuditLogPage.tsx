import { Alert, Badge, Button, Group, Paper, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { formatDateTime, type Bundle } from '@hearth/core';
import { OperationOutcomeAlert, useAsync, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useSession, projectId as projectIdOf } from '../session.js';
import {
  actionLabel,
  activityBuckets,
  outcomeLabel,
  patientsOf,
  whatLabel,
  whoLabel,
  type TrailEvent,
} from './audit-entries.js';

interface Filters {
  agent: string;
  patient: string;
  entity: string;
  action: string;
  outcome: string;
  from: string;
  to: string;
}

const EMPTY: Filters = { agent: '', patient: '', entity: '', action: '', outcome: '', from: '', to: '' };
const PAGE = 50;
/** Entries read for the activity chart. */
const CHART_ENTRIES = 1000;

function queryOf(filters: Filters): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of ['agent', 'patient', 'entity', 'action', 'outcome'] as const) {
    if (filters[name].trim()) query[name] = filters[name].trim();
  }
  const dates = [filters.from && `ge${filters.from}`, filters.to && `le${filters.to}`].filter(Boolean) as string[];
  if (dates.length) query.date = dates;
  return query;
}

/**
 * The project's access audit trail (project admins): who read or changed what, when, from where,
 * with what outcome; filters, a chart of activity over time, and a check of the trail's chain.
 */
export function AuditLogPage(): ReactNode {
  const client = useHearth();
  const { details } = useSession();
  const projectId = projectIdOf(details);
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [cursorUrl, setCursorUrl] = useState<string | undefined>();
  const [verify, setVerify] = useState<{ text?: string; ok?: boolean; error?: unknown }>({});
  const key = JSON.stringify(filters);
  const page = useAsync<Bundle<TrailEvent>>(
    () =>
      cursorUrl
        ? client.get<Bundle<TrailEvent>>(cursorUrl, { cache: 'no-cache' })
        : (client.search('AuditEvent', { ...queryOf(filters), _count: String(PAGE) }, { cache: 'no-cache' }) as Promise<
            Bundle<TrailEvent>
          >),
    `${key}/${cursorUrl ?? ''}`,
  );
  const chart = useAsync<TrailEvent[]>(
    async () =>
      (await client.searchResources(
        'AuditEvent',
        { ...queryOf(filters), _count: String(CHART_ENTRIES) },
        { cache: 'no-cache' },
      )) as unknown as TrailEvent[],
    key,
  );
  const events = (page.data?.entry ?? []).map((e) => e.resource as TrailEvent);
  const next = page.data?.link?.find((l) => l.relation === 'next')?.url;
  const set = (name: keyof Filters) => (value: string | null) => setDraft((d) => ({ ...d, [name]: value ?? '' }));

  const runVerify = async () => {
    setVerify({});
    try {
      const result = await client.get<{
        parameter?: { name: string; valueBoolean?: boolean; valueInteger?: number; valueString?: string }[];
      }>(client.fhirUrl('Project', projectId as string, '$verify-audit'), { cache: 'no-cache' });
      const p = (name: string) => result.parameter?.find((x) => x.name === name);
      const ok = p('intact')?.valueBoolean === true;
      setVerify({
        ok,
        text: ok
          ? `The chain holds: ${p('checked')?.valueInteger ?? 0} entries checked (from ${p('first')?.valueInteger} to ${p('head')?.valueInteger}).`
          : `The chain is broken at entry ${p('brokenAt')?.valueInteger}: ${p('reason')?.valueString ?? ''}`,
      });
    } catch (error) {
      setVerify({ error });
    }
  };

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Audit trail</Title>
        <Button variant="light" onClick={runVerify} disabled={!projectId}>
          Verify the chain
        </Button>
      </Group>
      {verify.text && (
        <Alert color={verify.ok ? 'green' : 'red'} title={verify.ok ? 'Intact' : 'Tampered'}>
          {verify.text}
        </Alert>
      )}
      {verify.error !== undefined && <OperationOutcomeAlert error={verify.error} />}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setCursorUrl(undefined);
          setFilters(draft);
        }}
      >
        <Group align="end" wrap="wrap">
          <TextInput
            label="Agent"
            placeholder="Practitioner/123"
            value={draft.agent}
            onChange={(e) => set('agent')(e.currentTarget.value)}
          />
          <TextInput
            label="Patient"
            placeholder="Patient/123"
            value={draft.patient}
            onChange={(e) => set('patient')(e.currentTarget.value)}
          />
          <TextInput
            label="Resource"
            placeholder="Observation/123"
            value={draft.entity}
            onChange={(e) => set('entity')(e.currentTarget.value)}
          />
          <Select
            label="Action"
            clearable
            value={draft.action || null}
            onChange={set('action')}
            data={[
              { value: 'C', label: 'Create' },
              { value: 'R', label: 'Read' },
              { value: 'U', label: 'Update' },
              { value: 'D', label: 'Delete' },
              { value: 'E', label: 'Execute' },
            ]}
          />
          <Select
            label="Outcome"
            clearable
            value={draft.outcome || null}
            onChange={set('outcome')}
            data={[
              { value: '0', label: 'Success' },
              { value: '4', label: 'Refused' },
              { value: '8', label: 'Server error' },
            ]}
          />
          <TextInput label="From" type="date" value={draft.from} onChange={(e) => set('from')(e.currentTarget.value)} />
          <TextInput label="To" type="date" value={draft.to} onChange={(e) => set('to')(e.currentTarget.value)} />
          <Button type="submit">Filter</Button>
        </Group>
      </form>
      <Paper withBorder p="sm" aria-label="Activity over time">
        <Text size="sm" c="dimmed" mb="xs">
          Activity over time (the newest {CHART_ENTRIES} entries matching the filters)
        </Text>
        {chart.error !== undefined ? (
          <OperationOutcomeAlert error={chart.error} />
        ) : (
          <ResponsiveContainer width="100%" height={200}>
            <BarChart data={activityBuckets(chart.data ?? [])}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="time" fontSize={11} />
              <YAxis allowDecimals={false} fontSize={11} />
              <Tooltip />
              <Legend />
              <Bar dataKey="count" name="entries" fill="#228be6" />
              <Bar dataKey="failures" name="refused or failed" fill="#e03131" />
            </BarChart>
          </ResponsiveContainer>
        )}
      </Paper>
      {page.error !== undefined && <OperationOutcomeAlert error={page.error} />}
      <Table striped highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            <Table.Th>Who</Table.Th>
            <Table.Th>Did</Table.Th>
            <Table.Th>What</Table.Th>
            <Table.Th>Patients</Table.Th>
            <Table.Th>From</Table.Th>
            <Table.Th>Outcome</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {events.map((event) => (
            <Table.Tr key={event.id}>
              <Table.Td>{formatDateTime(event.recorded)}</Table.Td>
              <Table.Td>{whoLabel(event)}</Table.Td>
              <Table.Td>{actionLabel(event)}</Table.Td>
              <Table.Td>{whatLabel(event)}</Table.Td>
              <Table.Td>
                {patientsOf(event).slice(0, 3).join(', ')}
                {patientsOf(event).length > 3 ? ` +${patientsOf(event).length - 3}` : ''}
              </Table.Td>
              <Table.Td>{event.agent?.[0]?.network?.address ?? ''}</Table.Td>
              <Table.Td>
                <Badge color={event.outcome === '0' ? 'green' : 'red'} variant="light">
                  {outcomeLabel(event)}
                </Badge>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {!page.loading && events.length === 0 && <Text c="dimmed">No entries match.</Text>}
      <Group>
        {cursorUrl && (
          <Button variant="default" onClick={() => setCursorUrl(undefined)}>
            Newest
          </Button>
        )}
        {next && (
          <Button variant="default" onClick={() => setCursorUrl(next)}>
            Older entries
          </Button>
        )}
      </Group>
    </Stack>
  );
}
