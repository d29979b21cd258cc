import { Anchor, Button, Card, Group, Loader, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { formatDate, getDisplayString, type Bundle, type Patient } from '@hearth/core';
import { OperationOutcomeAlert, ResourceAvatar, useAsync, useHearthContext } from '@hearth/react';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { useSession } from '../session.js';

/** The resource types whose counts the home page shows. */
const COUNTED = [
  'Patient',
  'Practitioner',
  'Organization',
  'Encounter',
  'Observation',
  'Condition',
  'MedicationRequest',
  'Questionnaire',
  'QuestionnaireResponse',
];

/** Guides on the documentation site the server serves at /docs/. */
const GUIDES = [
  { href: '/docs/getting-started', label: 'Getting started' },
  { href: '/docs/app', label: 'Using the app' },
  { href: '/docs/search', label: 'Searching' },
  { href: '/docs/tutorials', label: 'Tutorials' },
];

/** `/`: what to do first: recent patients, create a patient, what the project holds, the guides. */
export function HomePage(): ReactNode {
  const { profile } = useHearthContext();
  const { details } = useSession();
  return (
    <Stack>
      <div>
        <Title order={2}>Welcome{profile ? `, ${getDisplayString(profile)}` : ''}</Title>
        {details?.project?.name && <Text c="dimmed">Project {details.project.name}</Text>}
      </div>
      <Group>
        <Button component={Link} to="/Patient/new">
          Create patient
        </Button>
        <Button component={Link} to="/Patient" variant="default">
          All patients
        </Button>
      </Group>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder component="section" aria-labelledby="recent-patients">
          <Title order={3} size="h4" id="recent-patients" mb="xs">
            Recent patients
          </Title>
          <RecentPatients />
        </Card>
        <Card withBorder component="section" aria-labelledby="resource-counts">
          <Title order={3} size="h4" id="resource-counts" mb="xs">
            In this project
          </Title>
          <ResourceCounts />
        </Card>
      </SimpleGrid>
      <Card withBorder component="section" aria-labelledby="guides">
        <Title order={3} size="h4" id="guides" mb="xs">
          Guides
        </Title>
        <Group>
          {GUIDES.map((g) => (
            <Anchor key={g.href} href={g.href}>
              {g.label}
            </Anchor>
          ))}
        </Group>
      </Card>
    </Stack>
  );
}

function RecentPatients(): ReactNode {
  const { client } = useHearthContext();
  const { data, error, loading } = useAsync(
    () => client.searchResources('Patient', { _sort: '-_lastUpdated', _count: '5' }, { cache: 'no-cache' }),
    'recent-patients',
  );
  if (error) return <OperationOutcomeAlert error={error} />;
  if (loading || !data) return <Loader size="sm" aria-label="Loading recent patients" />;
  if (data.length === 0) {
    return <Text c="dimmed">No patients yet: create the first one.</Text>;
  }
  return (
    <Stack gap="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
      {data.map((patient: Patient) => (
        <Group key={patient.id} component="li" gap="sm" wrap="nowrap">
          <ResourceAvatar value={patient} size="sm" />
          <Anchor component={Link} to={`/Patient/${patient.id}`}>
            {getDisplayString(patient)}
          </Anchor>
          {patient.birthDate && (
            <Text size="sm" c="dimmed">
              born {formatDate(patient.birthDate)}
            </Text>
          )}
        </Group>
      ))}
    </Stack>
  );
}

function ResourceCounts(): ReactNode {
  const { client } = useHearthContext();
  const { data, error, loading } = useAsync(
    () =>
      Promise.all(
        COUNTED.map(async (type) => {
          const bundle = (await client.search(
            type as 'Patient',
            { _summary: 'count', _total: 'accurate' },
            { cache: 'no-cache' },
          )) as Bundle;
          return { type, total: bundle.total ?? 0 };
        }),
      ),
    'resource-counts',
  );
  if (error) return <OperationOutcomeAlert error={error} />;
  if (loading || !data) return <Loader size="sm" aria-label="Loading resource counts" />;
  return (
    <Table aria-label="Resource counts">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Type</Table.Th>
          <Table.Th ta="right">Count</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {data.map(({ type, total }) => (
          <Table.Tr key={type}>
            <Table.Td>
              <Anchor component={Link} to={`/${type}`}>
                {type}
              </Anchor>
            </Table.Td>
            <Table.Td ta="right">{total.toLocaleString()}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
