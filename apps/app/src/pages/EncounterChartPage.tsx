import { Alert, Anchor, Badge, Button, Card, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { formatPeriod, type Encounter, type Observation, type Patient } from '@hearth/core';
import {
  describeResource,
  EncounterDiagnoses,
  EncounterNote,
  OperationOutcomeAlert,
  PatientHeader,
  useAction,
  useHearth,
  useProfile,
  useResource,
  useAsync,
  VitalsForm,
} from '@hearth/react';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { clinicianReference } from './encounter-actions.js';

/**
 * `/Patient/:patientId/encounter/:encounterId`: charting one encounter: vital signs, the progress
 * note (draft, sign, amend), diagnoses, and finishing the encounter.
 */
export function EncounterChartPage(): ReactNode {
  const { patientId = '', encounterId = '' } = useParams();
  const client = useHearth();
  const clinician = clinicianReference(useProfile());
  const patient = useResource<Patient>(`Patient/${patientId}`);
  const read = useResource<Encounter>(`Encounter/${encounterId}`);
  // The newest version: adding a diagnosis or finishing makes one, read back from the write.
  const [encounter, setEncounter] = useState<Encounter | undefined>(undefined);
  useEffect(() => setEncounter(read.data), [read.data]);
  const [vitalsVersion, setVitalsVersion] = useState(0);
  const finish = useAction();

  if (patient.error || read.error) return <OperationOutcomeAlert error={patient.error ?? read.error} />;
  if (!patient.data || !encounter) return <Loader aria-label="Loading encounter" />;
  if (encounter.subject?.reference !== `Patient/${patientId}`) {
    return <Alert color="red">This encounter is not one of this patient&apos;s.</Alert>;
  }
  const subject = { reference: `Patient/${patientId}` };
  const ref = { reference: `Encounter/${encounterId}` };
  const open = encounter.status !== 'finished' && encounter.status !== 'cancelled';
  return (
    <Stack>
      <PatientHeader patient={patient.data} />
      <Card withBorder component="section" aria-label="Encounter">
        <Group justify="space-between" wrap="wrap" gap="sm">
          <div style={{ minWidth: 0 }}>
            <Title order={3}>{describeResource(encounter as never).title}</Title>
            <Group gap="xs" wrap="wrap">
              <Badge variant="light" color={open ? 'blue' : 'gray'}>
                {encounter.status}
              </Badge>
              <Text size="sm">{encounter.period ? formatPeriod(encounter.period) : ''}</Text>
              <Anchor component={Link} to={`/Patient/${patientId}`} size="sm">
                Back to the chart
              </Anchor>
            </Group>
          </div>
          {open && (
            <Button
              variant="default"
              loading={finish.busy}
              onClick={() =>
                finish.run(async () => {
                  const updated = await client.updateResource({
                    ...encounter,
                    status: 'finished',
                    period: { ...encounter.period, end: new Date().toISOString() },
                  });
                  client.invalidateSearches('Encounter');
                  setEncounter(updated);
                })
              }
            >
              Finish encounter
            </Button>
          )}
        </Group>
        <OperationOutcomeAlert error={finish.error} />
      </Card>
      {!clinician && (
        <Alert color="yellow">
          Notes, vital signs and diagnoses are recorded by a practitioner: sign in as one to chart.
        </Alert>
      )}
      <Card withBorder component="section" aria-label="Vital signs">
        <Title order={4} mb="sm">
          Vital signs
        </Title>
        <EncounterVitals encounterId={encounterId} version={vitalsVersion} />
        <VitalsForm
          subject={subject}
          encounter={ref}
          performer={clinician}
          onSaved={() => setVitalsVersion((v) => v + 1)}
        />
      </Card>
      {clinician && (
        <Card withBorder component="section" aria-label="Note">
          <Title order={4} mb="sm">
            Note
          </Title>
          <EncounterNote subject={subject} encounter={ref} author={clinician} />
        </Card>
      )}
      <Card withBorder component="section" aria-label="Diagnoses">
        <Title order={4} mb="sm">
          Diagnoses
        </Title>
        <EncounterDiagnoses encounter={encounter} recorder={clinician} onAdded={setEncounter} />
      </Card>
    </Stack>
  );
}

/** The vital signs recorded in this encounter, newest first. */
function EncounterVitals({ encounterId, version }: { encounterId: string; version: number }): ReactNode {
  const client = useHearth();
  const query = { encounter: `Encounter/${encounterId}`, category: 'vital-signs', _sort: '-date', _count: '50' };
  // Searched again after each save.
  const found = useAsync(() => client.search('Observation', query, { cache: 'no-cache' }), `${encounterId}/${version}`);
  const observations = (found.data?.entry ?? []).map((e) => e.resource as unknown as Observation);
  if (!observations.length) return null;
  return (
    <Stack gap={2} mb="sm" role="list" aria-label="Recorded vital signs">
      {observations.map((o) => {
        const d = describeResource(o as never);
        return (
          <Text key={o.id} size="sm" role="listitem">
            <Text span fw={600}>
              {d.title}
            </Text>
            {`: ${d.details.join(' · ')}`}
          </Text>
        );
      })}
    </Stack>
  );
}
