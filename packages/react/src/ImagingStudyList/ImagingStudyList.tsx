import { Accordion, Badge, Button, Group, Loader, Stack, Text } from '@mantine/core';
import { formatDate, formatDateTime, type Bundle, type ImagingStudy } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useSearch } from '../provider/hooks.js';
import {
  accessionNumber,
  instanceBinary,
  plural,
  sortedSeries,
  studyCounts,
  studyModalities,
  type ImagingInstance,
  type ImagingSeries,
} from './imaging.js';

export interface ImagingInstanceTarget {
  study: ImagingStudy;
  series: ImagingSeries;
  instance: ImagingInstance;
  /** The Binary holding the instance's DICOM file ('Binary/…'). */
  binary: string;
}

export interface ImagingStudyListProps {
  patientId: string;
  /** Opens an instance (only instances whose file the server holds can be opened). */
  onOpenInstance?: (target: ImagingInstanceTarget) => void;
  /** Studies per search (default 50, newest first). */
  count?: number;
}

/** Instances listed at first in a series; the rest behind "Show all" (a CT series can hold hundreds). */
const FIRST_INSTANCES = 60;

/**
 * A patient's imaging studies, newest first: each with its date, modalities, description,
 * accession number and counts; expanded, its series (number, modality, body site, description)
 * and, expanded in turn, their instances, which open in a viewer.
 */
export function ImagingStudyList({ patientId, onOpenInstance, count = 50 }: ImagingStudyListProps): ReactNode {
  const { data, error, loading } = useSearch('ImagingStudy', {
    patient: `Patient/${patientId}`,
    _sort: '-started',
    _count: String(count),
    _total: 'accurate',
  });
  if (error) return <OperationOutcomeAlert error={error} />;
  if (loading && !data) return <Loader aria-label="Loading imaging studies" />;
  const studies = ((data as Bundle<ImagingStudy> | undefined)?.entry ?? [])
    .map((e) => e.resource)
    .filter((r): r is ImagingStudy => r?.resourceType === 'ImagingStudy');
  if (!studies.length) {
    return <Text c="dimmed">No imaging studies for this patient.</Text>;
  }
  const total = data?.total;
  return (
    <Stack gap="xs">
      {total !== undefined && total > studies.length && (
        <Text size="sm" c="dimmed">
          The {studies.length} most recent of {total} studies.
        </Text>
      )}
      <Accordion multiple variant="separated" aria-label="Imaging studies">
        {studies.map((study) => (
          <StudyItem key={study.id} study={study} onOpenInstance={onOpenInstance} />
        ))}
      </Accordion>
    </Stack>
  );
}

function StudyItem({
  study,
  onOpenInstance,
}: {
  study: ImagingStudy;
  onOpenInstance?: (target: ImagingInstanceTarget) => void;
}): ReactNode {
  const counts = studyCounts(study);
  const modalities = studyModalities(study);
  const accession = accessionNumber(study);
  const title = study.description ?? study.procedureCode?.[0]?.text ?? 'Imaging study';
  const series = sortedSeries(study);
  return (
    <Accordion.Item value={study.id ?? title}>
      <Accordion.Control>
        <Stack gap={2}>
          <Group gap="xs" wrap="wrap">
            {modalities.map((m) => (
              <Badge key={m} variant="light" color="indigo">
                {m}
              </Badge>
            ))}
            <Text fw={600}>{title}</Text>
          </Group>
          <Text size="sm" c="dimmed">
            {[
              study.started ? formatDateTime(study.started) : 'Date unknown',
              `${counts.series} series`,
              plural(counts.instances, 'instance'),
              study.status !== 'available' ? study.status : undefined,
              accession ? `Accession ${accession}` : undefined,
            ]
              .filter(Boolean)
              .join(' · ')}
          </Text>
        </Stack>
      </Accordion.Control>
      <Accordion.Panel>
        {series.length ? (
          <Accordion multiple variant="contained" aria-label={`Series of ${title}`}>
            {series.map((s, i) => (
              <SeriesItem
                key={s.uid || i}
                series={s}
                onOpen={
                  onOpenInstance && ((instance, binary) => onOpenInstance({ study, series: s, instance, binary }))
                }
              />
            ))}
          </Accordion>
        ) : (
          <Text size="sm" c="dimmed">
            No series recorded.
          </Text>
        )}
      </Accordion.Panel>
    </Accordion.Item>
  );
}

function seriesTitle(series: ImagingSeries): string {
  return [series.number !== undefined ? `Series ${series.number}` : 'Series', series.modality?.code, series.description]
    .filter(Boolean)
    .join(' · ');
}

function SeriesItem({
  series,
  onOpen,
}: {
  series: ImagingSeries;
  onOpen?: (instance: ImagingInstance, binary: string) => void;
}): ReactNode {
  const [all, setAll] = useState(false);
  const instances = series.instance ?? [];
  const shown = all ? instances : instances.slice(0, FIRST_INSTANCES);
  const title = seriesTitle(series);
  const details = [
    plural(series.numberOfInstances ?? instances.length, 'instance'),
    series.bodySite?.display ?? series.bodySite?.code,
    series.laterality?.display ?? series.laterality?.code,
    series.started ? formatDate(series.started) : undefined,
  ].filter(Boolean);
  return (
    <Accordion.Item value={series.uid}>
      <Accordion.Control>
        <Text size="sm" fw={500}>
          {title}
        </Text>
        <Text size="xs" c="dimmed">
          {details.join(' · ')}
        </Text>
      </Accordion.Control>
      <Accordion.Panel>
        {instances.length ? (
          <Stack gap="xs">
            <Group gap="xs" role="list" aria-label={`Instances of ${title}`}>
              {shown.map((instance, i) => {
                const binary = instanceBinary(instance);
                const label = instance.number !== undefined ? `Instance ${instance.number}` : `Instance ${i + 1}`;
                return (
                  <div role="listitem" key={instance.uid || i}>
                    <Button
                      size="xs"
                      variant="light"
                      disabled={!binary || !onOpen}
                      title={binary ? `Open ${label} (${instance.uid})` : 'The server does not hold this file'}
                      onClick={() => binary && onOpen?.(instance, binary)}
                    >
                      {label}
                    </Button>
                  </div>
                );
              })}
            </Group>
            {shown.length < instances.length && (
              <Button size="xs" variant="subtle" onClick={() => setAll(true)} w="fit-content">
                Show all {instances.length} instances
              </Button>
            )}
          </Stack>
        ) : (
          <Text size="sm" c="dimmed">
            No instances recorded.
          </Text>
        )}
      </Accordion.Panel>
    </Accordion.Item>
  );
}
