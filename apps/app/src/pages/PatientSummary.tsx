import { Badge, Card, Grid, Group, List, Loader, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import {
  calculateAge,
  formatAddress,
  formatCodeableConcept,
  formatDate,
  formatHumanName,
  type Bundle,
  type Observation,
  type Patient,
  type Resource,
} from '@hearth/core';
import {
  groupByCode,
  ObservationChart,
  OperationOutcomeAlert,
  resourcesToTimeline,
  Timeline,
  useHearth,
  useAsync,
} from '@hearth/react';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';

interface ChartData {
  problems: Resource[];
  medications: Resource[];
  allergies: Resource[];
  vitals: Observation[];
  labs: Observation[];
  encounters: Resource[];
}

/** The patient chart: demographics, problems, medications, allergies, vital sign and lab trends, encounters. */
export function PatientSummary({ patient }: { patient: Resource }): ReactNode {
  const client = useHearth();
  const navigate = useNavigate();
  const p = patient as unknown as Patient;
  const ref = `Patient/${patient.id}`;
  const { data, error, loading } = useAsync<ChartData>(async () => {
    // One batch: six searches in one round trip (hl7.org/fhir/R4/http.html#transaction).
    const searches = [
      `Condition?patient=${ref}&_count=50`,
      `MedicationRequest?patient=${ref}&_count=50`,
      `AllergyIntolerance?patient=${ref}&_count=50`,
      `Observation?subject=${ref}&category=vital-signs&_count=500`,
      `Encounter?patient=${ref}&_count=50`,
      `Observation?subject=${ref}&category=laboratory&_count=500`,
    ];
    const response = await client.executeBatch({
      resourceType: 'Bundle',
      type: 'batch',
      entry: searches.map((url) => ({ request: { method: 'GET', url } })),
    });
    const results = (response.entry ?? []).map((e) =>
      ((e.resource as Bundle | undefined)?.entry ?? []).map((x) => x.resource as Resource).filter(Boolean),
    );
    return {
      problems: results[0] ?? [],
      medications: results[1] ?? [],
      allergies: results[2] ?? [],
      vitals: (results[3] ?? []) as unknown as Observation[],
      encounters: results[4] ?? [],
      // Only numeric results make a trend.
      labs: ((results[5] ?? []) as unknown as Observation[]).filter(
        (o) => o.valueQuantity?.value !== undefined || o.component?.some((c) => c.valueQuantity?.value !== undefined),
      ),
    };
  }, `${ref}/${patient.meta?.versionId}`);

  const name = p.name?.[0];
  return (
    <Stack>
      <Card withBorder aria-label="Demographics">
        <Group gap="xl" wrap="wrap">
          <Field label="Name" value={formatHumanName(name)} />
          <Field
            label="Birth date"
            value={p.birthDate ? `${formatDate(p.birthDate)} (${calculateAge(p.birthDate)?.years ?? '?'} years)` : '—'}
          />
          <Field label="Gender" value={p.gender ?? '—'} />
          <Field label="Phone" value={p.telecom?.find((t) => t.system === 'phone')?.value ?? '—'} />
          <Field label="Email" value={p.telecom?.find((t) => t.system === 'email')?.value ?? '—'} />
          <Field label="Address" value={formatAddress(p.address?.[0]) || '—'} />
        </Group>
      </Card>
      {error !== undefined && <OperationOutcomeAlert error={error} />}
      {loading && !data ? (
        <Loader aria-label="Loading chart" />
      ) : data ? (
        <Grid>
          <Grid.Col span={{ base: 12, md: 4 }}>
            <Stack>
              <ListCard title="Problems" items={data.problems.map((c) => formatCodeableConcept(c.code as never))} />
              <ListCard
                title="Medications"
                items={data.medications.map(
                  (m) =>
                    formatCodeableConcept(m.medicationCodeableConcept as never) ||
                    String((m.medicationReference as { display?: string })?.display ?? ''),
                )}
              />
              <ListCard
                title="Allergies"
                items={data.allergies.map((a) => formatCodeableConcept(a.code as never))}
                color="red"
              />
            </Stack>
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 8 }}>
            <Stack>
              <Title order={4}>Vital signs</Title>
              {data.vitals.length === 0 ? (
                <Text c="dimmed">No vital signs recorded.</Text>
              ) : (
                <SimpleGrid cols={{ base: 1, lg: 2 }}>
                  {groupByCode(data.vitals).map((g) => (
                    <ObservationChart key={g.code} observations={g.observations} />
                  ))}
                </SimpleGrid>
              )}
              {data.labs.length > 0 && (
                <>
                  <Title order={4}>Lab results</Title>
                  <SimpleGrid cols={{ base: 1, lg: 2 }}>
                    {groupByCode(data.labs).map((g) => (
                      <ObservationChart key={g.code} observations={g.observations} />
                    ))}
                  </SimpleGrid>
                </>
              )}
              <Title order={4}>Encounters</Title>
              <Timeline
                aria-label="Encounters"
                items={resourcesToTimeline(data.encounters).map((item) => ({
                  ...item,
                  title: formatCodeableConcept((item.resource?.type as never[] | undefined)?.[0]) || item.title,
                  body: <Text size="sm">{String(item.resource?.status ?? '')}</Text>,
                }))}
                onClick={(item) => item.resource && navigate(`/Encounter/${item.resource.id}`)}
              />
            </Stack>
          </Grid.Col>
        </Grid>
      ) : null}
    </Stack>
  );
}

function Field({ label, value }: { label: string; value: string }): ReactNode {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase">
        {label}
      </Text>
      <Text size="sm">{value}</Text>
    </div>
  );
}

function ListCard({ title, items, color = 'blue' }: { title: string; items: string[]; color?: string }): ReactNode {
  return (
    <Card withBorder aria-label={title}>
      <Group justify="space-between" mb="xs">
        <Title order={5}>{title}</Title>
        <Badge color={color} variant="light">
          {items.length}
        </Badge>
      </Group>
      {items.length ? (
        <List size="sm" spacing={2}>
          {items.map((t, i) => (
            <List.Item key={i}>{t || 'Unnamed'}</List.Item>
          ))}
        </List>
      ) : (
        <Text size="sm" c="dimmed">
          None recorded
        </Text>
      )}
    </Card>
  );
}
