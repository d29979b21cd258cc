import { Button, Group, NumberInput, Select, Stack } from '@mantine/core';
import {
  AVAILABILITY_URL,
  availabilityExtension,
  type Extension,
  type Parameters,
  type Reference,
  type Schedule,
} from '@hearth/core';
import { useMemo, useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import { HoursFields, TimeOffFields } from './AvailabilityFields.js';
import { draftAvailability, scheduleDraft, type AvailabilityDraft } from './availability-draft.js';

/** What Schedule/$generate-slots did. */
export interface SlotCounts {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  skipped: number;
}

export interface AvailabilityFormProps {
  /** The Schedule whose availability to change; without one, the form sets up a new Schedule. */
  schedule?: Schedule;
  /** Called with the stored Schedule and what generating its slots did. */
  onSaved: (schedule: Schedule, slots: SlotCounts) => void;
}

const WEEK_MS = 7 * 86_400_000;

export function slotCounts(p: Parameters): SlotCounts {
  const count = (name: string) => p.parameter?.find((q) => q.name === name)?.valueInteger ?? 0;
  return {
    created: count('created'),
    updated: count('updated'),
    deleted: count('deleted'),
    unchanged: count('unchanged'),
    skipped: count('skipped'),
  };
}

/** Weeks from now to the end of the schedule's planning horizon (at least 1), or 4. */
function weeksOpen(schedule: Schedule | undefined, now: number): number {
  const end = Date.parse(schedule?.planningHorizon?.end ?? '');
  return Number.isNaN(end) ? 4 : Math.min(52, Math.max(1, Math.ceil((end - now) / WEEK_MS)));
}

/**
 * A schedule's availability: working hours (days, start and end), slot length, time zone and
 * time off; saved on the Schedule as its availability extension, then its slots generated for the
 * weeks opened (Schedule/$generate-slots: time off gives busy-unavailable slots; running it again
 * updates the slots in place, booked ones untouched). Without `schedule`, it sets up a new one
 * for a practitioner (and a location).
 */
export function AvailabilityForm({ schedule, onSaved }: AvailabilityFormProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const localZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zones = useMemo(() => {
    const all = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
    return [...new Set(['UTC', localZone, ...all])];
  }, [localZone]);
  const [practitioner, setPractitioner] = useState<Reference | undefined>();
  const [location, setLocation] = useState<Reference | undefined>();
  // A malformed extension (written by hand) is shown, and the form starts from the defaults.
  const [initial] = useState<{ draft: AvailabilityDraft; error?: unknown }>(() => {
    try {
      return { draft: scheduleDraft(schedule, localZone) };
    } catch (error) {
      return { draft: scheduleDraft(undefined, localZone), error };
    }
  });
  const [draft, setDraft] = useState<AvailabilityDraft>(initial.draft);
  const [weeks, setWeeks] = useState<number | string>(() => weeksOpen(schedule, Date.now()));
  const set = (patch: Partial<AvailabilityDraft>) => setDraft((d) => ({ ...d, ...patch }));

  const submit = action.submit(async () => {
    if (!schedule && !practitioner?.reference) throw new Error('Choose the practitioner whose schedule this is');
    const availability = draftAvailability(draft);
    if (typeof availability === 'string') throw new Error(availability);
    const weeksAhead = Number(weeks);
    if (!Number.isInteger(weeksAhead) || weeksAhead < 1 || weeksAhead > 52) throw new Error('Open 1 to 52 weeks');
    const now = new Date();
    const planningHorizon = {
      start: now.toISOString(),
      end: new Date(now.getTime() + weeksAhead * WEEK_MS).toISOString(),
    };
    const extension = availabilityExtension(availability) as Extension;
    const saved = schedule
      ? await client.updateResource<Schedule>(
          {
            ...schedule,
            planningHorizon,
            extension: [...(schedule.extension ?? []).filter((e) => e.url !== AVAILABILITY_URL), extension],
          },
          // Someone else's change meanwhile is a 412 to show, not something to overwrite.
          { ifMatch: schedule.meta?.versionId },
        )
      : await client.createResource<Schedule>({
          resourceType: 'Schedule',
          active: true,
          actor: [practitioner as Reference, ...(location?.reference ? [location] : [])],
          planningHorizon,
          extension: [extension],
        });
    const counts = slotCounts(await client.generateSlots(saved.id as string));
    client.invalidateSearches('Schedule');
    client.invalidateSearches('Slot');
    onSaved(saved, counts);
  });

  return (
    <form onSubmit={submit} aria-label={schedule ? 'Availability of the schedule' : 'New schedule'}>
      <Stack gap="sm">
        <OperationOutcomeAlert error={initial.error} title="The schedule's availability could not be read" />
        {!schedule && (
          <>
            <ReferenceInput
              label="Practitioner"
              targetTypes={['Practitioner']}
              value={practitioner}
              onChange={setPractitioner}
              required
            />
            <ReferenceInput label="Location" targetTypes={['Location']} value={location} onChange={setLocation} />
          </>
        )}
        <HoursFields value={draft.hours} onChange={(hours) => set({ hours })} />
        <Group grow wrap="wrap" align="flex-start">
          <NumberInput
            label="Slot length (minutes)"
            min={5}
            max={720}
            value={draft.slotMinutes}
            onChange={(v) => set({ slotMinutes: v })}
            miw={120}
          />
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
        <TimeOffFields value={draft.timeOff} onChange={(timeOff) => set({ timeOff })} />
        <OperationOutcomeAlert error={action.error} />
        <Group justify="flex-end">
          <Button type="submit" loading={action.busy}>
            {schedule ? 'Save and update slots' : 'Create schedule and slots'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
