import { Alert, Button, Collapse, Group, Select, Stack, Text, Title } from '@mantine/core';
import type { Schedule } from '@hearth/core';
import {
  AvailabilityForm,
  OperationOutcomeAlert,
  ScheduleCalendar,
  SlotBooking,
  useAsync,
  useHearth,
} from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';

/** A schedule's name in the picker: its actors' names, else its id. */
export function scheduleLabel(s: Schedule): string {
  const names = (s.actor ?? []).map((a) => a.display).filter(Boolean);
  return names.length ? names.join(' · ') : `Schedule ${s.id}`;
}

/** /schedule: staff pick a schedule (or set one up) and work its week calendar. */
export function SchedulePage(): ReactNode {
  const client = useHearth();
  const [params, setParams] = useSearchParams();
  const scheduleId = params.get('schedule');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<string | undefined>();
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
  const choose = (id: string | null) => setParams(id ? { schedule: id } : {}, { replace: true });
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
          <Button variant={creating ? 'default' : 'filled'} onClick={() => setCreating((c) => !c)}>
            {creating ? 'Close' : 'New schedule'}
          </Button>
        </Group>
      </Group>
      <OperationOutcomeAlert error={schedules.error} />
      <Collapse in={creating}>
        {creating && (
          <AvailabilityForm
            onCreated={(schedule, slots) => {
              setCreating(false);
              setCreated(`Created the schedule of ${scheduleLabel(schedule)} with ${slots} slots`);
              setReload((n) => n + 1);
              choose(schedule.id as string);
            }}
          />
        )}
      </Collapse>
      {created && (
        <Alert color="green" role="status" withCloseButton onClose={() => setCreated(undefined)}>
          {created}
        </Alert>
      )}
      {scheduleId ? (
        <ScheduleCalendar key={scheduleId} scheduleId={scheduleId} />
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
