import { Button, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { formatDateTime } from '@hearth/core';
import type { ReactNode } from 'react';
import { ScrollRegion } from '../components/ScrollRegion.js';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

/** The answer of GET /admin/super/stats. */
export interface DatabaseStatistics {
  databaseBytes?: number | string;
  connections?: number;
  pool?: { total: number; idle: number; waiting: number };
  resources?: Record<string, number>;
  migrations?: { id: number; name: string; applied_at: string }[];
}

/** How many resource types the chart shows (the table lists them all). */
const CHARTED = 12;

/** The super admin's database statistics: figures, resources per type as a chart and a table, migrations. */
export function DatabaseStats({ stats, onRefresh }: { stats: DatabaseStatistics; onRefresh: () => void }): ReactNode {
  const resources = Object.entries(stats.resources ?? {})
    .map(([type, count]) => ({ type, count }))
    .sort((a, b) => b.count - a.count);
  const total = resources.reduce((sum, r) => sum + r.count, 0);
  return (
    <Stack aria-label="Database statistics" component="section">
      <Group justify="space-between">
        <Title order={4}>Database</Title>
        <Button size="compact-sm" variant="subtle" onClick={onRefresh}>
          Refresh
        </Button>
      </Group>
      <SimpleGrid cols={{ base: 2, sm: 4 }}>
        <Figure label="Database size" value={formatBytes(Number(stats.databaseBytes ?? 0))} />
        <Figure label="Resources" value={total.toLocaleString()} />
        <Figure label="Connections" value={String(stats.connections ?? '—')} />
        <Figure
          label="Pool (idle / total)"
          value={stats.pool ? `${stats.pool.idle} / ${stats.pool.total}` : '—'}
          detail={stats.pool?.waiting ? `${stats.pool.waiting} waiting` : undefined}
        />
      </SimpleGrid>
      {resources.length > 0 && (
        <Card withBorder component="figure" m={0} aria-label="Resources per type, chart">
          <Text size="sm" fw={500} mb="xs" component="figcaption">
            Resources per type{resources.length > CHARTED ? ` (the ${CHARTED} largest)` : ''}
          </Text>
          <ResponsiveContainer width="100%" height={Math.min(CHARTED, resources.length) * 28 + 40}>
            <BarChart data={resources.slice(0, CHARTED)} layout="vertical" margin={{ left: 8, right: 16 }}>
              <CartesianGrid strokeDasharray="3 3" horizontal={false} />
              <XAxis type="number" allowDecimals={false} />
              <YAxis type="category" dataKey="type" width={140} interval={0} tick={{ fontSize: 12 }} />
              <Tooltip />
              <Bar dataKey="count" name="Resources" fill="var(--mantine-color-ember-6)" />
            </BarChart>
          </ResponsiveContainer>
        </Card>
      )}
      <ScrollRegion label="Resources per type, scrollable">
        <Table striped aria-label="Resources per type">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Resource type</Table.Th>
              <Table.Th ta="right">Resources</Table.Th>
              <Table.Th ta="right">Share</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {resources.map((r) => (
              <Table.Tr key={r.type}>
                <Table.Td>{r.type}</Table.Td>
                <Table.Td ta="right">{r.count.toLocaleString()}</Table.Td>
                <Table.Td ta="right">{total ? `${((100 * r.count) / total).toFixed(1)} %` : '—'}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollRegion>
      {stats.migrations && stats.migrations.length > 0 && (
        <ScrollRegion label="Migrations, scrollable">
          <Table striped aria-label="Migrations">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Migration</Table.Th>
                <Table.Th>Name</Table.Th>
                <Table.Th>Applied</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {stats.migrations.map((m) => (
                <Table.Tr key={m.id}>
                  <Table.Td>{m.id}</Table.Td>
                  <Table.Td>{m.name}</Table.Td>
                  <Table.Td>{formatDateTime(m.applied_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollRegion>
      )}
    </Stack>
  );
}

function Figure({ label, value, detail }: { label: string; value: string; detail?: string }): ReactNode {
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="lg">
        {value}
      </Text>
      {detail && (
        <Text size="xs" c="dimmed">
          {detail}
        </Text>
      )}
    </Card>
  );
}

/** Bytes as kB, MB or GB (powers of 1024). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
