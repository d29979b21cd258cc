import { Alert, Badge, Card, Group, Loader, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { formatCodeableConcept, formatDateTime, type DiagnosticReport, type Observation } from '@hearth/core';
import type { ReactNode } from 'react';
import { ObservationChart } from '../ObservationChart/ObservationChart.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { observationValue } from '../ResourceDescription/describe.js';
import { FlagBadge } from '../ResultEntryForm/ResultEntryForm.js';
import { analyteKey, loadReport, observationFlag, previousResult, resultTime } from './report.js';
import { ScrollRegion } from '../util/scroll-region.js';

export interface DiagnosticReportViewProps {
  /** The DiagnosticReport's id. */
  reportId: string;
  /** Reload key: a new value reads the report again. */
  version?: string | number;
}

const critical = (flag: string | undefined) => flag === 'HH' || flag === 'LL';

function rangeText(o: Observation): string {
  const range = o.referenceRange?.[0];
  if (!range) return '';
  if (range.text) return range.text;
  const low = range.low?.value;
  const high = range.high?.value;
  if (low !== undefined && high !== undefined) return `${low}–${high}`;
  if (low !== undefined) return `≥ ${low}`;
  if (high !== undefined) return `≤ ${high}`;
  return '';
}

/**
 * A lab report: its status, dates and conclusion; the results table with each value's flag
 * highlighted (H/L orange, HH/LL red), its reference range, the previous value of the analyte and
 * the change; and a trend chart per analyte (the patient's results of it over time).
 */
export function DiagnosticReportView({ reportId, version }: DiagnosticReportViewProps): ReactNode {
  const client = useHearth();
  const loaded = useAsync(() => loadReport(client, reportId), `${reportId}/${version ?? ''}`);
  if (loaded.error) return <OperationOutcomeAlert error={loaded.error} />;
  if (!loaded.data) return <Loader aria-label="Loading report" />;
  const { report, observations, history } = loaded.data;
  const flagged = observations.filter((o) => {
    const f = observationFlag(o);
    return f && f !== 'N';
  });
  const anyCritical = observations.some((o) => critical(observationFlag(o)));
  return (
    <Stack>
      <ReportHeading report={report} />
      {anyCritical && (
        <Alert color="red" role="alert" title="Critical result">
          {flagged
            .filter((o) => ['HH', 'LL'].includes(observationFlag(o) ?? ''))
            .map((o) => `${formatCodeableConcept(o.code)} ${observationValue(o)}`)
            .join(' · ')}
        </Alert>
      )}
      <ScrollRegion label="Report values">
        <Table aria-label="Results" verticalSpacing={4}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Analyte</Table.Th>
              <Table.Th>Value</Table.Th>
              <Table.Th>Flag</Table.Th>
              <Table.Th>Range</Table.Th>
              <Table.Th>Previous</Table.Th>
              <Table.Th>Change</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {observations.map((o) => {
              const flag = observationFlag(o);
              const { previous, change } = previousResult(o, history[analyteKey(o)] ?? []);
              const highlighted = flag && flag !== 'N';
              return (
                <Table.Tr
                  key={o.id}
                  data-flag={flag ?? ''}
                  bg={highlighted ? (critical(flag) ? 'red.0' : 'orange.0') : undefined}
                >
                  <Table.Td>{o.code?.text ?? formatCodeableConcept(o.code)}</Table.Td>
                  <Table.Td>
                    <Text size="sm" fw={highlighted ? 700 : undefined} c={critical(flag) ? 'red.9' : undefined}>
                      {observationValue(o)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <FlagBadge flag={flag} />
                  </Table.Td>
                  <Table.Td>{rangeText(o)}</Table.Td>
                  <Table.Td>
                    {previous ? (
                      <Text size="sm">
                        {observationValue(previous)}
                        <Text span size="xs" c="dimmed">
                          {' '}
                          ({formatDateTime(resultTime(previous))})
                        </Text>
                      </Text>
                    ) : (
                      <Text size="sm" c="dimmed">
                        none
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{change === undefined ? '' : `${change > 0 ? '+' : ''}${change}`}</Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </ScrollRegion>
      {report.conclusion && (
        <Text size="sm">
          <Text span fw={600}>
            Conclusion:{' '}
          </Text>
          {report.conclusion}
        </Text>
      )}
      <Title order={4}>Trends</Title>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {observations
          .filter((o) => o.valueQuantity && o.code?.coding?.[0]?.code)
          .map((o) => (
            <ObservationChart
              key={o.id}
              title={o.code?.text ?? formatCodeableConcept(o.code)}
              observations={history[analyteKey(o)] ?? [o]}
            />
          ))}
      </SimpleGrid>
    </Stack>
  );
}

function ReportHeading({ report }: { report: DiagnosticReport }): ReactNode {
  return (
    <Card withBorder>
      <Group justify="space-between" wrap="wrap" gap="xs">
        <div style={{ minWidth: 0 }}>
          <Title order={3}>{formatCodeableConcept(report.code) || 'Lab report'}</Title>
          <Text size="sm" c="dimmed">
            Collected {formatDateTime(report.effectiveDateTime ?? report.effectivePeriod?.start)} · issued{' '}
            {formatDateTime(report.issued)}
            {report.performer?.[0]?.display ? ` · by ${report.performer[0].display}` : ''}
          </Text>
        </div>
        <Badge variant="light" color={report.status === 'final' ? 'green' : 'blue'}>
          {report.status}
        </Badge>
      </Group>
    </Card>
  );
}
