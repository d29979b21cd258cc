import { Badge, Card, Grid, Group, List, Loader, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { formatAddress, formatDateTime, type Observation, type Patient, type Resource } from '@hearth/core';
import {
  describeResource,
  groupByCode,
  ObservationChart,
  OperationOutcomeAlert,
  resourcesToTimeline,
  Timeline,
  useAsync,
  useHearth,
} from '@hearth/react';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { latestByCode, loadSummary, type SummaryData } from './patient-summary-data.js';

/**
 * The patient chart's summary: the record's counts; active problems and medications, allergies,
 * care team, open tasks and upcoming appointments; the latest results with abnormal flags; vital
 * sign and lab trends; recent encounters (opening the encounter's charting page).
 */
export function PatientSummary({ patient }: { patient: Resource }): ReactNode {
  const client = useHearth();
  const navigate = useNavigate();
  const p = patient as unknown as Patient;
  const { data, error, loading } = useAsync<SummaryData>(
    () => loadSummary(client, patient.id as string),
    `Patient/${patient.id}/${patient.meta?.versionId}`,
  );
  const describe = (r: Resource) => {
    const d = describeResource(r);
    return [d.title, ...d.details].filter(Boolean).join(' · ');
  };
  return (
    <Stack>
      <Card withBorder aria-label="Demographics">
        <Group gap="xl" wrap="wrap">
          <Field label="Phone" value={p.telecom?.find((t) => t.system === 'phone')?.value ?? '—'} />
          <Field label="Email" value={p.telecom?.find((t) => t.system === 'email')?.value ?? '—'} />
          <Field label="Address" value={formatAddress(p.address?.[0]) || '—'} />
        </Group>
      </Card>
      {error !== undefined && <OperationOutcomeAlert error={error} />}
      {loading && !data ? (
        <Loader aria-label="Loading chart" />
      ) : data ? (
        <>
          <SimpleGrid cols={{ base: 2, sm: 4 }} role="list" aria-label="Record counts">
            {(
              [
                ['Conditions', data.counts.conditions],
                ['Medications', data.counts.medications],
                ['Observations', data.counts.observations],
                ['Encounters', data.counts.encounters],
              ] as const
            ).map(([label, count]) => (
              <Paper key={label} withBorder p="xs" role="listitem">
                <Text fw={700} size="xl">
                  {count}
                </Text>
                <Text size="sm">{label}</Text>
              </Paper>
            ))}
          </SimpleGrid>
          <Grid>
            <Grid.Col span={{ base: 12, md: 4 }}>
              <Stack>
                <ListCard title="Problems" items={data.problems.map((c) => describeResource(c).title)} />
                <ListCard title="Medications" items={data.medications.map(describe)} />
                <ListCard title="Allergies" items={data.allergies.map(describe)} color="red" />
                <ListCard title="Care team" items={data.careTeams.map(describe)} empty="No active care team" />
                <ListCard title="Open tasks" items={data.tasks.map(describe)} empty="No open tasks" />
                <ListCard
                  title="Upcoming appointments"
                  items={data.appointments.map(describe)}
                  empty="No upcoming appointments"
                />
              </Stack>
            </Grid.Col>
            <Grid.Col span={{ base: 12, md: 8 }}>
              <Stack>
                <LatestResults labs={data.labs} />
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
                {data.labs.some(numeric) && (
                  <>
                    <Title order={4}>Lab results</Title>
                    <SimpleGrid cols={{ base: 1, lg: 2 }}>
                      {groupByCode(data.labs.filter(numeric)).map((g) => (
                        <ObservationChart key={g.code} observations={g.observations} />
                      ))}
                    </SimpleGrid>
                  </>
                )}
                <Title order={4}>Encounters</Title>
                <Timeline
                  aria-label="Encounters"
                  items={resourcesToTimeline(data.encounters).map((item) => {
                    const d = item.resource ? describeResource(item.resource) : undefined;
                    return {
                      ...item,
                      title: d?.title || item.title,
                      body: <Text size="sm">{[d?.status, ...(d?.details ?? [])].filter(Boolean).join(' · ')}</Text>,
                    };
                  })}
                  onClick={(item) => item.resource && navigate(`/Patient/${patient.id}/encounter/${item.resource.id}`)}
                />
              </Stack>
            </Grid.Col>
          </Grid>
        </>
      ) : null}
    </Stack>
  );
}

/** Only numeric results make a trend. */
function numeric(o: Observation): boolean {
  return o.valueQuantity?.value !== undefined || !!o.component?.some((c) => c.valueQuantity?.value !== undefined);
}

/** The newest result of each test, abnormal ones flagged (interpretation, else the reference range). */
function LatestResults({ labs }: { labs: Observation[] }): ReactNode {
  const latest = latestByCode(labs);
  return (
    <Card withBorder aria-label="Latest results">
      <Title order={5} mb="xs">
        Latest results
      </Title>
      {latest.length ? (
        <List size="sm" spacing={4}>
          {latest.map((o) => {
            const d = describeResource(o as never);
            const when = o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.issued;
            return (
              <List.Item key={o.id}>
                <Group gap={6} wrap="wrap">
                  <Text size="sm" fw={600}>
                    {d.title}
                  </Text>
                  <Text size="sm">{d.details.join(' · ')}</Text>
                  {d.flag && (
                    <Badge color="red" size="sm">
                      {d.flag}
                    </Badge>
                  )}
                  {when && (
                    <Text size="xs" c="dimmed">
                      {formatDateTime(when)}
                    </Text>
                  )}
                </Group>
              </List.Item>
            );
          })}
        </List>
      ) : (
        <Text size="sm" c="dimmed">
          No results
        </Text>
      )}
    </Card>
  );
}

function Field({ label, value }: { label: string; value: string }): ReactNode {
  return (
    <div style={{ minWidth: 0 }}>
      <Text size="xs" c="dimmed" tt="uppercase">
        {label}
      </Text>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {value}
      </Text>
    </div>
  );
}

function ListCard({
  title,
  items,
  color = 'blue',
  empty = 'None recorded',
}: {
  title: string;
  items: string[];
  color?: string;
  empty?: string;
}): ReactNode {
  return (
    <Card withBorder aria-label={title}>
      <Group justify="space-between" mb="xs" wrap="nowrap">
        <Title order={5}>{title}</Title>
        <Badge color={color} variant="light">
          {items.length}
        </Badge>
      </Group>
      {items.length ? (
        <List size="sm" spacing={2}>
          {items.map((t, i) => (
            <List.Item key={i} style={{ overflowWrap: 'anywhere' }}>
              {t || 'Unnamed'}
            </List.Item>
          ))}
        </List>
      ) : (
        <Text size="sm" c="dimmed">
          {empty}
        </Text>
      )}
    </Card>
  );
}
