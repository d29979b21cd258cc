import { Button, Checkbox, Group, NumberInput, Select, Stack, TextInput } from '@mantine/core';
import {
  availabilityExtension,
  DAYS_OF_WEEK,
  type Availability,
  type DayOfWeek,
  type Extension,
  type Reference,
  type Schedule,
} from '@hearth/core';
import { useMemo, useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';

export interface AvailabilityFormProps {
  /** Called with the new Schedule and how many slots were generated. */
  onCreated: (schedule: Schedule, slots: number) => void;
}

const DAY_NAMES: Record<DayOfWeek, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

/** 'HH:MM' as minutes after midnight, or undefined. */
export function minutesOfTime(value: string): number | undefined {
  const m = /^(\d{2}):(\d{2})$/.exec(value);
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

export interface AvailabilityDraft {
  days: string[];
  from: string;
  to: string;
  slotMinutes: number | string;
  timeZone: string;
}

/** The availability of a draft, or the first thing wrong with it (for the form to show). */
export function draftAvailability(d: AvailabilityDraft): Availability | string {
  const start = minutesOfTime(d.from);
  const end = minutesOfTime(d.to);
  if (d.days.length === 0) return 'Choose at least one working day';
  if (start === undefined || end === undefined) return 'Give the start and end of working hours';
  if (end <= start) return 'Working hours must end after they start';
  const minutes = Number(d.slotMinutes);
  if (!Number.isInteger(minutes) || minutes < 5 || minutes > 720) return 'Slot length must be 5 to 720 minutes';
  if (end - start < minutes) return 'Working hours are shorter than one slot';
  return {
    timeZone: d.timeZone,
    slotMinutes: minutes,
    availableTime: [{ daysOfWeek: d.days as DayOfWeek[], startMinute: start, endMinute: end }],
    notAvailableTime: [],
  };
}

/** Sets up a practitioner's Schedule: working days and hours, slot length, time zone; then generates its slots. */
export function AvailabilityForm({ onCreated }: AvailabilityFormProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const localZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zones = useMemo(() => {
    const all = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
    return [...new Set(['UTC', localZone, ...all])];
  }, [localZone]);
  const [practitioner, setPractitioner] = useState<Reference | undefined>();
  const [location, setLocation] = useState<Reference | undefined>();
  const [draft, setDraft] = useState<AvailabilityDraft>({
    days: ['mon', 'tue', 'wed', 'thu', 'fri'],
    from: '09:00',
    to: '17:00',
    slotMinutes: 30,
    timeZone: localZone,
  });
  const [weeks, setWeeks] = useState<number | string>(4);
  const set = (patch: Partial<AvailabilityDraft>) => setDraft((d) => ({ ...d, ...patch }));

  const submit = action.submit(async () => {
    if (!practitioner?.reference) throw new Error('Choose the practitioner whose schedule this is');
    const availability = draftAvailability(draft);
    if (typeof availability === 'string') throw new Error(availability);
    const weeksAhead = Number(weeks);
    if (!Number.isInteger(weeksAhead) || weeksAhead < 1 || weeksAhead > 52) throw new Error('Open 1 to 52 weeks');
    const now = new Date();
    const schedule = await client.createResource<Schedule>({
      resourceType: 'Schedule',
      active: true,
      actor: [practitioner, ...(location?.reference ? [location] : [])],
      planningHorizon: {
        start: now.toISOString(),
        end: new Date(now.getTime() + weeksAhead * 7 * 86_400_000).toISOString(),
      },
      extension: [availabilityExtension(availability) as Extension],
    });
    const counts = await client.generateSlots(schedule.id as string);
    client.invalidateSearches('Schedule');
    onCreated(schedule, counts.parameter?.find((p) => p.name === 'created')?.valueInteger ?? 0);
  });

  return (
    <form onSubmit={submit} aria-label="New schedule">
      <Stack gap="sm">
        <ReferenceInput
          label="Practitioner"
          targetTypes={['Practitioner']}
          value={practitioner}
          onChange={setPractitioner}
          required
        />
        <ReferenceInput label="Location" targetTypes={['Location']} value={location} onChange={setLocation} />
        <Checkbox.Group label="Working days" value={draft.days} onChange={(days) => set({ days })}>
          <Group gap="sm" mt={4}>
            {DAYS_OF_WEEK.map((d) => (
              <Checkbox key={d} value={d} label={DAY_NAMES[d]} />
            ))}
          </Group>
        </Checkbox.Group>
        <Group grow wrap="wrap" align="flex-start">
          <TextInput
            type="time"
            label="Starts at"
            value={draft.from}
            onChange={(e) => set({ from: e.currentTarget.value })}
            miw={120}
          />
          <TextInput
            type="time"
            label="Ends at"
            value={draft.to}
            onChange={(e) => set({ to: e.currentTarget.value })}
            miw={120}
          />
          <NumberInput
            label="Slot length (minutes)"
            min={5}
            max={720}
            value={draft.slotMinutes}
            onChange={(v) => set({ slotMinutes: v })}
            miw={120}
          />
        </Group>
        <Group grow wrap="wrap" align="flex-start">
          <Select
            label="Time zone"
            data={zones}
            value={draft.timeZone}
            onChange={(z) => z && set({ timeZone: z })}
            searchable
            allowDeselect={false}
            miw={180}
            comboboxProps={{ withinPortal: true }}
          />
          <NumberInput label="Weeks to open" min={1} max={52} value={weeks} onChange={setWeeks} miw={120} />
        </Group>
        <OperationOutcomeAlert error={action.error} />
        <Group justify="flex-end">
          <Button type="submit" loading={action.busy}>
            Create schedule and slots
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
