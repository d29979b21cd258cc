import { Button, Loader, Stack, Table, Text } from '@mantine/core';
import type { ClientApplication } from '@hearth/core';
import { OperationOutcomeAlert, useAsync, useHearth } from '@hearth/react';
import type { ReactNode } from 'react';

/**
 * SMART apps registered to the project (ClientApplications with a launch URI), launchable as an
 * EHR launch (hl7.org/fhir/smart-app-launch/app-launch.html#launch-app-ehr-launch): the app is
 * opened with `iss` (the FHIR base) and a `launch` context created as a SmartAppLaunch.
 */
export function AppsTab(): ReactNode {
  const client = useHearth();
  const apps = useAsync<ClientApplication[]>(
    async () =>
      (
        (await client.searchResources(
          'ClientApplication',
          { _count: '200' },
          { cache: 'no-cache' },
        )) as ClientApplication[]
      ).filter((c) => c.launchUri),
    'apps',
  );
  if (apps.error) return <OperationOutcomeAlert error={apps.error} />;
  if (!apps.data) return <Loader size="sm" aria-label="Loading apps" />;
  if (!apps.data.length) {
    return <Text c="dimmed">No SMART apps yet: give a client application a launch URI to list it here.</Text>;
  }
  return (
    <Stack>
      <Table striped aria-label="SMART apps">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>App</Table.Th>
            <Table.Th>Launch URI</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {apps.data.map((app) => (
            <Table.Tr key={app.id}>
              <Table.Td>{app.name ?? app.id}</Table.Td>
              <Table.Td>{app.launchUri}</Table.Td>
              <Table.Td>
                <Button
                  size="compact-sm"
                  onClick={async () => {
                    const launch = (await client.createResource({ resourceType: 'SmartAppLaunch' } as never)) as {
                      id: string;
                    };
                    const url = new URL(app.launchUri as string);
                    url.searchParams.set('iss', client.getFhirBaseUrl().replace(/\/$/, ''));
                    url.searchParams.set('launch', launch.id);
                    window.open(url.toString(), '_blank', 'noopener');
                  }}
                >
                  Launch
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
