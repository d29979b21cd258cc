import { Alert, Button, Collapse, Group, Select, Stack, Text, Title } from '@mantine/core';
import type { Schedule } from '@hearth/core';
import {
  AvailabilityForm,
  OperationOutcomeAlert,
  ScheduleCalendar,
  SlotBooking,
  useAsync,
  useHearth,
  type SlotCounts,
} from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';

/** A schedule's name in the picker: its actors' names, else its id. */
export function scheduleLabel(s: Schedule): string {
  const names = (s.actor ?? []).map((a) => a.display).filter(Boolean);
  return names.length ? names.join(' · ') : `Schedule ${s.id}`;
}

/** "2 slots created, 4 changed, 1 removed" (the counts that are not zero), or "no slot changed". */
export function slotCountsText(c: SlotCounts): string {
  const parts = [
    [c.created, 'created'],
    [c.updated, 'changed'],
    [c.deleted, 'removed'],
  ]
    .filter(([n]) => n)
    .map(([n, what]) => `${n} ${n === 1 ? 'slot' : 'slots'} ${what}`);
  return parts.length ? parts.join(', ') : 'no slot changed';
}

/** /schedule: staff pick a schedule (or set one up), change its availability and work its week calendar. */
export function SchedulePage(): ReactNode {
  const client = useHearth();
  const [params, setParams] = useSearchParams();
  const scheduleId = params.get('schedule');
  const [open, setOpen] = useState<'new' | 'edit' | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [reload, setReload] = useState(0);
  const schedules = useAsync(
    () =>
      client.searchResources(
        'Schedule',
        { active: 'true', _count: '200', _sort: '-_lastUpdated' },
        { cache: 'no-cache' },
      ),
    `schedules/${reload}`,
  );
  const current = schedules.data?.find((s) => s.id === scheduleId);
  const choose = (id: string | null) => {
    setOpen((o) => (o === 'edit' ? undefined : o));
    setParams(id ? { schedule: id } : {}, { replace: true });
  };
  const toggle = (which: 'new' | 'edit') => setOpen((o) => (o === which ? undefined : which));
  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-end" wrap="wrap">
        <Title order={2}>Schedule</Title>
        <Group align="flex-end" gap="xs" wrap="wrap">
          <Select
            label="Schedule"
            placeholder="Choose a schedule"
            data={(schedules.data ?? []).map((s) => ({ value: s.id as string, label: scheduleLabel(s) }))}
            value={scheduleId}
            onChange={choose}
            searchable
            miw={240}
            comboboxProps={{ withinPortal: true }}
          />
          {current && (
            <Button variant={open === 'edit' ? 'default' : 'light'} onClick={() => toggle('edit')}>
              {open === 'edit' ? 'Close' : 'Edit availability'}
            </Button>
          )}
          <Button variant={open === 'new' ? 'default' : 'filled'} onClick={() => toggle('new')}>
            {open === 'new' ? 'Close' : 'New schedule'}
          </Button>
        </Group>
      </Group>
      <OperationOutcomeAlert error={schedules.error} />
      <Collapse in={open !== undefined}>
        {open === 'new' && (
          <AvailabilityForm
            onSaved={(schedule, slots) => {
              setOpen(undefined);
              setNotice(`Created the schedule of ${scheduleLabel(schedule)} with ${slots.created} slots`);
              setReload((n) => n + 1);
              choose(schedule.id as string);
            }}
          />
        )}
        {open === 'edit' && current && (
          <AvailabilityForm
            key={`${current.id}/${current.meta?.versionId ?? ''}`}
            schedule={current}
            onSaved={(schedule, slots) => {
              setOpen(undefined);
              setNotice(`Saved the availability of ${scheduleLabel(schedule)}: ${slotCountsText(slots)}`);
              setReload((n) => n + 1);
            }}
          />
        )}
      </Collapse>
      {notice && (
        <Alert color="green" role="status" withCloseButton onClose={() => setNotice(undefined)}>
          {notice}
        </Alert>
      )}
      {scheduleId ? (
        // Read again after the availability changed: its slots did too.
        <ScheduleCalendar key={`${scheduleId}/${reload}`} scheduleId={scheduleId} />
      ) : (
        <Text c="dimmed">Choose a schedule to see its week, or set up a new one.</Text>
      )}
    </Stack>
  );
}

/** /book: a patient books, sees and cancels their own appointments. */
export function BookPage(): ReactNode {
  return (
    <Stack gap="md">
      <Title order={2}>Appointments</Title>
      <SlotBooking />
    </Stack>
  );
}
