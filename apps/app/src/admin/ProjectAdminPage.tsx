import { Alert, Loader, Stack, Table, Tabs, Title } from '@mantine/core';
import { OperationOutcomeAlert, useAsync, useHearth } from '@hearth/react';
import type { ReactNode } from 'react';
import { useNavigate, useParams } from 'react-router';
import { isProjectAdmin, projectId, useSession } from '../session.js';
import { AppsTab } from './AppsTab.js';
import { BotsTab } from './BotsTab.js';
import { ClientsTab } from './ClientsTab.js';
import { PoliciesTab } from './PoliciesTab.js';
import { SettingsTab } from './SettingsTab.js';
import type { ProjectAdminDetails } from './types.js';
import { UsersTab } from './UsersTab.js';

const TABS: Record<string, string> = {
  project: 'Details',
  users: 'Users',
  clients: 'Clients',
  bots: 'Bots',
  policies: 'Access policies',
  secrets: 'Secrets',
  sites: 'Sites',
  apps: 'Apps',
};

/** Project administration (project admins): `/admin/{tab}`. */
export function ProjectAdminPage(): ReactNode {
  const { tab = 'project' } = useParams();
  const navigate = useNavigate();
  const client = useHearth();
  const { details, loading: sessionLoading } = useSession();
  const id = projectId(details);
  const project = useAsync<ProjectAdminDetails>(
    id ? () => client.getProjectAdmin<ProjectAdminDetails>(id, { cache: 'no-cache' }) : undefined,
    id ?? '',
  );
  if (sessionLoading || (!details && !project.error)) return <Loader aria-label="Loading project" />;
  if (!isProjectAdmin(details)) {
    return <Alert color="yellow">Only project administrators can open this page.</Alert>;
  }
  if (project.error) return <OperationOutcomeAlert error={project.error} />;
  if (!project.data || !id) return <Loader aria-label="Loading project" />;
  const p = project.data.project;
  const data = project.data;
  return (
    <Stack>
      <Title order={2}>{p.name ?? 'Project'}</Title>
      <Tabs value={TABS[tab] ? tab : 'project'} onChange={(t) => t && navigate(`/admin/${t}`)} keepMounted={false}>
        <Tabs.List>
          {Object.entries(TABS).map(([key, label]) => (
            <Tabs.Tab key={key} value={key}>
              {label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="project" pt="md">
          <Table variant="vertical" withTableBorder maw={700} aria-label="Project details">
            <Table.Tbody>
              <Row label="Name" value={p.name} />
              <Row label="Id" value={p.id} />
              <Row label="Description" value={p.description} />
              <Row label="Owner" value={p.owner?.display ?? p.owner?.reference} />
              <Row label="Strict mode" value={p.strictMode ? 'yes' : 'no'} />
              <Row label="Features" value={(p.features ?? []).join(', ')} />
              <Row label="Members" value={String(data.members.length)} />
            </Table.Tbody>
          </Table>
        </Tabs.Panel>
        <Tabs.Panel value="users" pt="md">
          <UsersTab
            projectId={id}
            members={data.members}
            onChanged={project.reload}
            ownMembershipId={details?.membership?.id}
          />
        </Tabs.Panel>
        <Tabs.Panel value="clients" pt="md">
          <ClientsTab projectId={id} clients={data.clients} onChanged={project.reload} />
        </Tabs.Panel>
        <Tabs.Panel value="bots" pt="md">
          <BotsTab projectId={id} bots={data.bots} />
        </Tabs.Panel>
        <Tabs.Panel value="policies" pt="md">
          <PoliciesTab />
        </Tabs.Panel>
        <Tabs.Panel value="secrets" pt="md">
          <SettingsTab project={p} kind="secrets" onSaved={project.reload} />
        </Tabs.Panel>
        <Tabs.Panel value="sites" pt="md">
          <SettingsTab project={p} kind="sites" onSaved={project.reload} />
        </Tabs.Panel>
        <Tabs.Panel value="apps" pt="md">
          <AppsTab />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

function Row({ label, value }: { label: string; value?: string }): ReactNode {
  return (
    <Table.Tr>
      <Table.Th w={160}>{label}</Table.Th>
      <Table.Td>{value || '—'}</Table.Td>
    </Table.Tr>
  );
}
