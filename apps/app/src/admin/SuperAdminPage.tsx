import {
  Alert,
  Button,
  Card,
  Group,
  Loader,
  PasswordInput,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { formatDateTime, type Project } from '@hearth/core';
import { JsonView, OperationOutcomeAlert, ResourceBadge, useAction, useAsync, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { isSuperAdmin, useSession } from '../session.js';
import { ScrollRegion } from '../components/ScrollRegion.js';
import { DatabaseStats, type DatabaseStatistics } from './DatabaseStats.js';
import { ReindexAction } from './ReindexAction.js';

/** Super admin: every project, and the maintenance actions of /admin/super/*. */
export function SuperAdminPage(): ReactNode {
  const client = useHearth();
  const { details, loading } = useSession();
  const projects = useAsync<(Project & { memberCount?: number })[]>(
    isSuperAdmin(details) ? () => client.get('admin/super/projects', { cache: 'no-cache' }) : undefined,
    String(isSuperAdmin(details)),
  );
  const stats = useAsync<DatabaseStatistics>(
    isSuperAdmin(details) ? () => client.get('admin/super/stats', { cache: 'no-cache' }) : undefined,
    String(isSuperAdmin(details)),
  );
  if (loading) return <Loader aria-label="Loading session" />;
  if (!isSuperAdmin(details)) {
    return <Alert color="yellow">Only super administrators can open this page.</Alert>;
  }
  return (
    <Stack>
      <Title order={2}>Super admin</Title>
      <Title order={4}>Projects</Title>
      {projects.error !== undefined && <OperationOutcomeAlert error={projects.error} />}
      {projects.loading && !projects.data ? (
        <Loader size="sm" aria-label="Loading projects" />
      ) : (
        <ScrollRegion label="Projects, scrollable">
          <Table striped aria-label="Projects">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Id</Table.Th>
                <Table.Th>Owner</Table.Th>
                <Table.Th>Members</Table.Th>
                <Table.Th>Updated</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(projects.data ?? []).map((p) => (
                <Table.Tr key={p.id}>
                  <Table.Td>
                    {p.name}
                    {p.superAdmin ? ' (super admin)' : ''}
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                      {p.id}
                    </Text>
                  </Table.Td>
                  <Table.Td>{p.owner ? <ResourceBadge value={p.owner} avatar={false} link={false} /> : '—'}</Table.Td>
                  <Table.Td>{p.memberCount ?? '—'}</Table.Td>
                  <Table.Td>{formatDateTime(p.meta?.lastUpdated)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollRegion>
      )}
      {stats.error !== undefined && <OperationOutcomeAlert error={stats.error} />}
      {stats.loading && !stats.data && <Loader size="sm" aria-label="Loading database statistics" />}
      {stats.data && <DatabaseStats stats={stats.data} onRefresh={stats.reload} />}
      <Title order={4}>Maintenance</Title>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <ReindexAction />
        <Action title="Rebuild value sets" path="admin/super/valuesets" fields={[]} />
        <Action
          title="Set a user's password"
          path="admin/super/setpassword"
          fields={[
            { name: 'email', label: 'Email' },
            { name: 'password', label: 'New password', secret: true },
          ]}
        />
        <Action
          title="Purge old resources"
          path="admin/super/purge"
          fields={[
            { name: 'resourceType', label: 'Resource type (Login, AuditEvent…)' },
            { name: 'before', label: 'Before (date)', type: 'date' },
          ]}
        />
        <Action title="Run database migrations" path="admin/super/migrate" fields={[]} />
      </SimpleGrid>
    </Stack>
  );
}

interface FieldDef {
  name: string;
  label: string;
  secret?: boolean;
  type?: string;
}

function Action({ title, path, fields }: { title: string; path: string; fields: FieldDef[] }): ReactNode {
  const client = useHearth();
  const [values, setValues] = useState<Record<string, string>>({});
  const { busy, error, run } = useAction();
  // Wrapped, so that an answer with no body still counts as done.
  const [done, setDone] = useState<{ value: unknown } | undefined>(undefined);
  return (
    <Card withBorder>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setDone(undefined);
          await run(async () => {
            const body = Object.fromEntries(Object.entries(values).filter(([, v]) => v));
            setDone({ value: await client.post(path, body, 'application/json') });
          });
        }}
      >
        <Stack gap="xs">
          <Title order={5}>{title}</Title>
          {fields.map((f) =>
            f.secret ? (
              <PasswordInput
                key={f.name}
                label={f.label}
                value={values[f.name] ?? ''}
                onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })}
              />
            ) : (
              <TextInput
                key={f.name}
                type={f.type}
                label={f.label}
                value={values[f.name] ?? ''}
                onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })}
              />
            ),
          )}
          <Group>
            <Button type="submit" size="sm" loading={busy}>
              {title}
            </Button>
          </Group>
          {error !== undefined && <OperationOutcomeAlert error={error} />}
          {done && (
            <>
              <Text c="green" size="sm" role="status">
                {outcomeText(done.value) ?? 'Done.'}
              </Text>
              {done.value !== undefined && done.value !== null && !outcomeText(done.value) && (
                <JsonView value={done.value} maxHeight={200} />
              )}
            </>
          )}
        </Stack>
      </form>
    </Card>
  );
}

/** The text of an informational OperationOutcome answer ('Reindexed 12 Patient'). */
function outcomeText(value: unknown): string | undefined {
  const o = value as { resourceType?: string; issue?: { details?: { text?: string } }[] } | undefined;
  return o?.resourceType === 'OperationOutcome' ? o.issue?.find((i) => i.details?.text)?.details?.text : undefined;
}
