import { Button, Checkbox, Fieldset, Group, Stack, Text, TextInput } from '@mantine/core';
import { DAYS_OF_WEEK, type DayOfWeek } from '@hearth/core';
import type { ReactNode } from 'react';
import { NEW_HOURS, NEW_TIME_OFF, type HoursDraft, type TimeOffDraft } from './availability-draft.js';

const DAY_NAMES: Record<DayOfWeek, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

/** Replaces item `i` of a list with `patch` applied. */
function patched<T>(list: T[], i: number, patch: Partial<T>): T[] {
  return list.map((item, j) => (j === i ? { ...item, ...patch } : item));
}

/** The working hours: one or more sets of days with a start and an end time. */
export function HoursFields({
  value,
  onChange,
}: {
  value: HoursDraft[];
  onChange: (v: HoursDraft[]) => void;
}): ReactNode {
  return (
    <Stack gap="xs">
      {value.map((h, i) => {
        const legend = value.length > 1 ? `Working hours ${i + 1}` : 'Working hours';
        return (
          <Fieldset key={i} legend={legend} p="sm">
            <Stack gap="xs">
              <Checkbox.Group
                label="Working days"
                value={h.days}
                onChange={(days) => onChange(patched(value, i, { days }))}
              >
                <Group gap="sm" mt={4}>
                  {DAYS_OF_WEEK.map((d) => (
                    <Checkbox key={d} value={d} label={DAY_NAMES[d]} />
                  ))}
                </Group>
              </Checkbox.Group>
              <Group grow wrap="wrap" align="flex-end">
                <TextInput
                  type="time"
                  label="Starts at"
                  value={h.from}
                  onChange={(e) => onChange(patched(value, i, { from: e.currentTarget.value }))}
                  miw={120}
                />
                <TextInput
                  type="time"
                  label="Ends at"
                  value={h.to}
                  onChange={(e) => onChange(patched(value, i, { to: e.currentTarget.value }))}
                  miw={120}
                />
                {value.length > 1 && (
                  <Button
                    variant="subtle"
                    color="red"
                    aria-label={`Remove ${legend.toLowerCase()}`}
                    onClick={() => onChange(value.filter((_, j) => j !== i))}
                    maw={110}
                  >
                    Remove
                  </Button>
                )}
              </Group>
            </Stack>
          </Fieldset>
        );
      })}
      <Group>
        <Button variant="default" size="xs" onClick={() => onChange([...value, { ...NEW_HOURS, days: [] }])}>
          Add working hours
        </Button>
      </Group>
    </Stack>
  );
}

/**
 * Time off: holidays (whole days) and shorter absences (a day and a time at either end). Its slots
 * are generated busy-unavailable, with the reason as their comment.
 */
export function TimeOffFields({
  value,
  onChange,
}: {
  value: TimeOffDraft[];
  onChange: (v: TimeOffDraft[]) => void;
}): ReactNode {
  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        Time off
      </Text>
      {value.length === 0 && (
        <Text size="sm" c="dimmed">
          None: every working day is open.
        </Text>
      )}
      {value.map((t, i) => (
        <Fieldset key={i} legend={`Time off ${i + 1}`} p="sm">
          <Stack gap="xs">
            <TextInput
              label="Reason"
              placeholder="Holiday, training…"
              value={t.description}
              onChange={(e) => onChange(patched(value, i, { description: e.currentTarget.value }))}
            />
            <Group grow wrap="wrap" align="flex-start">
              <TextInput
                type="date"
                label="First day off"
                value={t.startDate}
                onChange={(e) => {
                  const startDate = e.currentTarget.value;
                  // One day off is the usual case: the last day follows the first until it is set.
                  const follow = !t.endDate || t.endDate === t.startDate;
                  onChange(patched(value, i, { startDate, ...(follow ? { endDate: startDate } : {}) }));
                }}
                miw={150}
              />
              <TextInput
                type="time"
                label="From time"
                description="Blank: the whole day"
                value={t.startTime}
                onChange={(e) => onChange(patched(value, i, { startTime: e.currentTarget.value }))}
                miw={120}
              />
            </Group>
            <Group grow wrap="wrap" align="flex-start">
              <TextInput
                type="date"
                label="Last day off"
                description="Blank: until further notice"
                value={t.endDate}
                onChange={(e) => onChange(patched(value, i, { endDate: e.currentTarget.value }))}
                miw={150}
              />
              <TextInput
                type="time"
                label="Until time"
                description="Blank: the whole day"
                value={t.endTime}
                onChange={(e) => onChange(patched(value, i, { endTime: e.currentTarget.value }))}
                miw={120}
              />
            </Group>
            <Group justify="flex-end">
              <Button
                variant="subtle"
                color="red"
                size="xs"
                aria-label={`Remove time off ${i + 1}`}
                onClick={() => onChange(value.filter((_, j) => j !== i))}
              >
                Remove
              </Button>
            </Group>
          </Stack>
        </Fieldset>
      ))}
      <Group>
        <Button variant="default" size="xs" onClick={() => onChange([...value, { ...NEW_TIME_OFF }])}>
          Add time off
        </Button>
      </Group>
    </Stack>
  );
}
