import { Badge, Button, Group, Modal, Paper, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { getDisplayString, type Appointment, type Bundle, type Schedule, type Slot } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { addDays, slotLabel, STATUS_LABELS, timeLabel } from '../WeekCalendar/week.js';

export interface SlotBookingProps {
  /** How many days ahead to look (default 14). */
  days?: number;
  locale?: string;
}

/** Free slots of a $find answer grouped by local day, each with the names of its schedule's actors. */
export function slotsByDay(
  bundle: Bundle | undefined,
  locale?: string,
): { day: string; slots: { slot: Slot; with: string }[] }[] {
  const schedules = new Map<string, Schedule>();
  const slots: Slot[] = [];
  for (const e of bundle?.entry ?? []) {
    const r = e.resource as Slot | Schedule | undefined;
    if (r?.resourceType === 'Schedule') schedules.set(`Schedule/${r.id}`, r);
    if (r?.resourceType === 'Slot') slots.push(r);
  }
  const groups = new Map<string, { slot: Slot; with: string }[]>();
  for (const slot of slots) {
    const day = new Date(slot.start).toLocaleDateString(locale, { weekday: 'long', month: 'long', day: 'numeric' });
    const actors = schedules.get(slot.schedule.reference ?? '')?.actor ?? [];
    const names = actors
      .map((a) => a.display)
      .filter(Boolean)
      .join(', ');
    groups.set(day, [...(groups.get(day) ?? []), { slot, with: names }]);
  }
  return [...groups].map(([day, list]) => ({ day, slots: list }));
}

/**
 * A patient's booking page: free slots of the next days (Appointment/$find) to book for
 * themselves, and their own upcoming appointments, each cancellable. The server books only for
 * the signed-in patient.
 */
export function SlotBooking({ days = 14, locale }: SlotBookingProps): ReactNode {
  const client = useHearth();
  const [reload, setReload] = useState(0);
  const [practitioner, setPractitioner] = useState<string | null>(null);
  const [chosen, setChosen] = useState<{ slot: Slot; with: string } | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const today = new Date();
  const practitioners = useAsync(
    () => client.searchResources('Practitioner', { _count: '100', _sort: 'name' }),
    'practitioners',
  );
  const found = useAsync(
    () =>
      client.findSlots({
        start: today.toISOString(),
        end: addDays(today, days).toISOString(),
        ...(practitioner ? { practitioner } : {}),
        _count: 200,
      }),
    `${practitioner ?? ''}/${reload}`,
  );
  const upcoming = useAsync(
    () =>
      client.searchResources(
        'Appointment',
        {
          date: `ge${today.toISOString().slice(0, 10)}`,
          status: 'proposed,pending,booked',
          _sort: 'date',
          _count: '100',
        },
        { cache: 'no-cache' },
      ),
    `mine/${reload}`,
  );
  const groups = slotsByDay(found.data, locale);
  const changed = (text: string) => {
    setNotice(text);
    setReload((n) => n + 1);
  };

  return (
    <Stack gap="lg">
      {notice && (
        <Text role="status" c="green.9" fw={500}>
          {notice}
        </Text>
      )}
      <section aria-labelledby="my-appointments">
        <Title order={3} id="my-appointments" mb="xs">
          Your upcoming appointments
        </Title>
        <OperationOutcomeAlert error={upcoming.error} />
        {upcoming.data?.length === 0 && (
          <Text size="sm" c="dimmed">
            None booked.
          </Text>
        )}
        <Stack gap="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {(upcoming.data ?? []).map((a) => (
            <MyAppointment
              key={a.id}
              appointment={a}
              locale={locale}
              onCancelled={() => changed('Appointment cancelled')}
            />
          ))}
        </Stack>
      </section>
      <section aria-labelledby="free-times">
        <Group justify="space-between" align="flex-end" wrap="wrap" mb="xs">
          <Title order={3} id="free-times">
            Book an appointment
          </Title>
          <Select
            label="With"
            placeholder="Anyone"
            clearable
            data={(practitioners.data ?? []).map((p) => ({
              value: `Practitioner/${p.id}`,
              label: getDisplayString(p),
            }))}
            value={practitioner}
            onChange={setPractitioner}
            miw={200}
            comboboxProps={{ withinPortal: true }}
          />
        </Group>
        <OperationOutcomeAlert error={found.error} />
        {found.data && groups.length === 0 && (
          <Text size="sm" c="dimmed">
            No free times in the next {days} days.
          </Text>
        )}
        <Stack gap="sm">
          {groups.map((g) => (
            <Paper key={g.day} withBorder p="sm" component="section" aria-label={g.day}>
              <Text fw={600} mb={6}>
                {g.day}
              </Text>
              <Group gap="xs">
                {g.slots.map((s) => (
                  <Button
                    key={s.slot.id}
                    variant="light"
                    size="xs"
                    aria-label={`Book ${slotLabel(new Date(s.slot.start), locale)}${s.with ? ` with ${s.with}` : ''}`}
                    onClick={() => setChosen(s)}
                  >
                    {timeLabel(new Date(s.slot.start), locale)}
                  </Button>
                ))}
              </Group>
            </Paper>
          ))}
        </Stack>
      </section>
      {chosen && (
        <ConfirmBooking
          choice={chosen}
          locale={locale}
          onClose={() => setChosen(undefined)}
          onBooked={() => {
            setChosen(undefined);
            changed(`Booked ${slotLabel(new Date(chosen.slot.start), locale)}`);
          }}
          onTaken={() => setReload((n) => n + 1)}
        />
      )}
    </Stack>
  );
}

function ConfirmBooking(props: {
  choice: { slot: Slot; with: string };
  locale?: string;
  onClose: () => void;
  onBooked: () => void;
  onTaken: () => void;
}): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [reason, setReason] = useState('');
  const when = slotLabel(new Date(props.choice.slot.start), props.locale);
  const book = action.submit(async () => {
    try {
      await client.bookAppointment({
        slot: `Slot/${props.choice.slot.id}`,
        appointment: reason.trim() ? { description: reason.trim() } : undefined,
      });
    } catch (err) {
      // Someone else took it meanwhile: the list is read again behind the message.
      props.onTaken();
      throw err;
    }
    client.invalidateSearches('Appointment');
    props.onBooked();
  });
  return (
    <Modal opened onClose={props.onClose} title="Confirm your appointment">
      <form onSubmit={book} aria-label="Confirm the booking">
        <Stack gap="sm">
          <Text>
            {when}
            {props.choice.with ? ` with ${props.choice.with}` : ''}
          </Text>
          <TextInput label="Reason for visit" value={reason} onChange={(e) => setReason(e.currentTarget.value)} />
          <OperationOutcomeAlert error={action.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={props.onClose}>
              Back
            </Button>
            <Button type="submit" loading={action.busy}>
              Book
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function MyAppointment(props: { appointment: Appointment; locale?: string; onCancelled: () => void }): ReactNode {
  const { appointment: a, locale } = props;
  const client = useHearth();
  const action = useAction();
  const [confirming, setConfirming] = useState(false);
  const when = a.start ? slotLabel(new Date(a.start), locale) : '';
  const others = (a.participant ?? [])
    .filter((p) => !p.actor?.reference?.startsWith('Patient/'))
    .map((p) => p.actor?.display)
    .filter(Boolean)
    .join(', ');
  const cancel = () =>
    action.run(async () => {
      await client.cancelAppointment(a.id as string, 'Cancelled by the patient');
      client.invalidateSearches('Appointment');
      props.onCancelled();
    });
  return (
    <li aria-label={when}>
      <Paper withBorder p="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <div>
            <Text fw={500}>{when}</Text>
            <Text size="sm" c="dimmed">
              {[others, a.description].filter(Boolean).join(' · ')}
            </Text>
          </div>
          <Group gap="xs">
            <Badge variant="light">{STATUS_LABELS[a.status] ?? a.status}</Badge>
            {confirming ? (
              <>
                <Button size="xs" color="red" loading={action.busy} onClick={cancel}>
                  Yes, cancel
                </Button>
                <Button size="xs" variant="default" onClick={() => setConfirming(false)}>
                  Keep it
                </Button>
              </>
            ) : (
              <Button size="xs" variant="light" color="red" onClick={() => setConfirming(true)}>
                Cancel
              </Button>
            )}
          </Group>
        </Group>
        <OperationOutcomeAlert error={action.error} />
      </Paper>
    </li>
  );
}
