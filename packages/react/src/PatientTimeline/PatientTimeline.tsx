import { Badge, Button, Group, Loader, MultiSelect, Stack, Text, TextInput } from '@mantine/core';
import type { Resource } from '@hearth/core';
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth, useMetadata } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { describeResource } from '../ResourceDescription/describe.js';
import { Timeline, type TimelineItem } from '../Timeline/Timeline.js';
import {
  countTimeline,
  TimelinePager,
  type TimelineEntry,
  type TimelineFilter,
  type TimelineSource,
} from './timeline-pager.js';

export interface PatientTimelineProps {
  patientId: string;
  /** Entries per page (default 20). */
  pageSize?: number;
  /** Opens an entry (a click, or Enter on it). */
  onOpen?: (resource: Resource) => void;
}

/**
 * Access events are the record of who looked at the chart, not of care: they have their own page
 * (the access log), and every chart view would add to them.
 */
const LEFT_OUT = new Set(['AuditEvent']);

/**
 * Everything in a patient's compartment, newest first, a page at a time: filterable by type (with
 * each type's count) and by date, each entry described for people (what, value, status, flags).
 */
export function PatientTimeline({ patientId, pageSize = 20, onOpen }: PatientTimelineProps): ReactNode {
  const client = useHearth();
  const metadata = useMetadata();
  const sources = useMemo<TimelineSource[]>(
    () =>
      Object.entries(metadata?.patientCompartment ?? {})
        .filter(([type]) => !LEFT_OUT.has(type))
        .map(([type, s]) => ({ type, ...s })),
    [metadata?.patientCompartment],
  );
  const [filter, setFilter] = useState<TimelineFilter>({});
  const dates = { from: filter.from, to: filter.to };
  const counts = useAsync(
    sources.length ? () => countTimeline(client, patientId, sources, dates) : undefined,
    `${patientId}|${sources.length}|${filter.from ?? ''}|${filter.to ?? ''}`,
  );
  const [entries, setEntries] = useState<TimelineEntry[]>([]);
  const pager = useRef<TimelinePager | undefined>(undefined);
  const action = useAction();

  // A new pager for each filter, over the types that have something to show.
  useEffect(() => {
    const found = counts.data;
    setEntries([]);
    pager.current = undefined;
    if (!found) return;
    const withEntries = sources.filter((s) => found[s.type]);
    const current = new TimelinePager(client, patientId, withEntries, filter, pageSize);
    pager.current = current;
    void action.run(async () => {
      const page = await current.nextPage();
      if (pager.current === current) setEntries(page);
    });
    // The action's run is stable; the filter's types matter through their list, its dates through the counts.
  }, [counts.data, client, patientId, sources, pageSize, (filter.types ?? []).join(',')]);

  const more = () =>
    action.run(async () => {
      const current = pager.current;
      if (!current) return;
      const page = await current.nextPage();
      if (pager.current === current) setEntries((e) => [...e, ...page]);
    });

  const typeOptions = Object.entries(counts.data ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, n]) => ({ value: type, label: `${type} (${n})` }));
  const total = Object.entries(counts.data ?? {})
    .filter(([type]) => !filter.types?.length || filter.types.includes(type))
    .reduce((sum, [, n]) => sum + n, 0);
  const items: TimelineItem[] = entries.map(({ resource, date }) => {
    const d = describeResource(resource);
    return {
      date,
      resource,
      title: (
        <Group gap={6} wrap="wrap">
          <Badge variant="light" color="gray" size="sm">
            {resource.resourceType}
          </Badge>
          <Text span fw={600} size="sm">
            {d.title || 'Untitled'}
          </Text>
          {d.flag && (
            <Badge color="red" size="sm">
              {d.flag}
            </Badge>
          )}
          {d.status && (
            <Badge variant="default" size="sm">
              {d.status}
            </Badge>
          )}
        </Group>
      ),
      body: d.details.length ? <Text size="sm">{d.details.join(' · ')}</Text> : undefined,
    };
  });

  return (
    <Stack gap="sm">
      <Group align="flex-end" gap="sm" wrap="wrap">
        <MultiSelect
          label="Types"
          placeholder={filter.types?.length ? undefined : 'All types'}
          data={typeOptions}
          value={filter.types ?? []}
          onChange={(types) => setFilter((f) => ({ ...f, types }))}
          searchable
          clearable
          miw={200}
          style={{ flex: '1 1 240px' }}
        />
        <TextInput
          type="date"
          label="From"
          value={filter.from ?? ''}
          onChange={(e) => {
            const from = e.currentTarget.value || undefined;
            setFilter((f) => ({ ...f, from }));
          }}
        />
        <TextInput
          type="date"
          label="To"
          value={filter.to ?? ''}
          onChange={(e) => {
            const to = e.currentTarget.value || undefined;
            setFilter((f) => ({ ...f, to }));
          }}
        />
      </Group>
      <OperationOutcomeAlert error={counts.error ?? action.error} />
      {counts.data && (
        <Text size="sm" c="dimmed" role="status">
          Showing {entries.length} of {total}
        </Text>
      )}
      {(counts.loading || (action.busy && !entries.length)) && <Loader aria-label="Loading timeline" size="sm" />}
      {counts.data && !action.busy && !entries.length ? (
        <Text c="dimmed">Nothing recorded{filter.from || filter.to ? ' in these dates' : ''}.</Text>
      ) : (
        entries.length > 0 && (
          <Timeline
            aria-label="Patient timeline"
            items={items}
            onClick={onOpen ? (item) => item.resource && onOpen(item.resource) : undefined}
          />
        )
      )}
      {entries.length > 0 && pager.current?.hasMore && (
        <Button variant="default" onClick={more} loading={action.busy} style={{ alignSelf: 'flex-start' }}>
          Show more
        </Button>
      )}
    </Stack>
  );
}
