import { Alert, Button, Group, Modal, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import type { Appointment, Reference, Slot } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { CalendarLegend, WeekCalendar } from '../WeekCalendar/WeekCalendar.js';
import {
  addDays,
  appointmentPatient,
  calendarEvents,
  slotLabel,
  startOfWeek,
  STATUS_LABELS,
  weekLabel,
} from '../WeekCalendar/week.js';

export interface ScheduleCalendarProps {
  scheduleId: string;
  /** The week shown first (default: this week). */
  initialWeek?: Date;
  locale?: string;
}

const SHOWN_APPOINTMENTS = 'proposed,pending,booked,arrived,checked-in,fulfilled,noshow,waitlist';

/** A schedule's week for staff: slots and appointments by status; book, move (drag or "Move to…") and cancel. */
export function ScheduleCalendar({ scheduleId, initialWeek, locale }: ScheduleCalendarProps): ReactNode {
  const client = useHearth();
  const [weekStart, setWeekStart] = useState(() => startOfWeek(initialWeek ?? new Date()));
  const [reload, setReload] = useState(0);
  const [booking, setBooking] = useState<Slot | undefined>();
  const [selected, setSelected] = useState<Appointment | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const move = useAction();
  const range = [`ge${weekStart.toISOString()}`, `lt${addDays(weekStart, 7).toISOString()}`];
  const week = useAsync(async () => {
    const [slots, appointments] = await Promise.all([
      client.searchResources(
        'Slot',
        { schedule: `Schedule/${scheduleId}`, start: range, _sort: 'start', _count: '1000' },
        { cache: 'no-cache' },
      ),
      client.searchResources(
        'Appointment',
        { 'slot.schedule': `Schedule/${scheduleId}`, date: range, status: SHOWN_APPOINTMENTS, _count: '1000' },
        { cache: 'no-cache' },
      ),
    ]);
    return { slots: [...slots], appointments: [...appointments] };
  }, `${scheduleId}/${weekStart.toISOString()}/${reload}`);
  const events = calendarEvents(week.data?.slots ?? [], week.data?.appointments ?? []);
  const freeSlots = events.flatMap((e) =>
    e.kind === 'slot' && e.status === 'free' && e.start > new Date() ? [e.slot] : [],
  );
  const changed = (text: string) => {
    setNotice(text);
    setReload((n) => n + 1);
  };
  const moveTo = (appointment: Appointment, slot: Slot) =>
    move.run(async () => {
      await client.rescheduleAppointment(appointment.id as string, `Slot/${slot.id}`);
      setSelected(undefined);
      changed(`Moved ${appointmentPatient(appointment)} to ${slotLabel(new Date(slot.start), locale)}`);
    });

  return (
    <Stack gap="sm">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Group gap="xs">
          <Button variant="default" size="xs" onClick={() => setWeekStart((w) => addDays(w, -7))}>
            Previous week
          </Button>
          <Button variant="default" size="xs" onClick={() => setWeekStart(startOfWeek(new Date()))}>
            This week
          </Button>
          <Button variant="default" size="xs" onClick={() => setWeekStart((w) => addDays(w, 7))}>
            Next week
          </Button>
        </Group>
        <Title order={3} size="h4" aria-live="polite">
          {weekLabel(weekStart, locale)}
        </Title>
      </Group>
      <CalendarLegend statuses={['free', 'booked', 'arrived', 'fulfilled', 'noshow', 'busy-unavailable']} />
      {notice && (
        <Alert color="green" withCloseButton onClose={() => setNotice(undefined)} role="status">
          {notice}
        </Alert>
      )}
      <OperationOutcomeAlert error={week.error ?? move.error} />
      {week.data && events.length === 0 && (
        <Text c="dimmed" size="sm">
          No slots this week. Generate slots for the schedule, or go to another week.
        </Text>
      )}
      <WeekCalendar
        weekStart={weekStart}
        events={events}
        locale={locale}
        label={`Schedule for the week of ${weekLabel(weekStart, locale)}`}
        onSelectSlot={(slot) => slot.start > new Date().toISOString() && setBooking(slot)}
        onSelectAppointment={setSelected}
        onMoveAppointment={moveTo}
      />
      {booking && (
        <BookSlotModal
          slot={booking}
          locale={locale}
          onClose={() => setBooking(undefined)}
          onBooked={(a) => {
            setBooking(undefined);
            changed(`Booked ${appointmentPatient(a)} on ${slotLabel(new Date(booking.start), locale)}`);
          }}
        />
      )}
      {selected && (
        <AppointmentModal
          appointment={selected}
          freeSlots={freeSlots}
          locale={locale}
          moving={move}
          onMove={(slot) => moveTo(selected, slot)}
          onClose={() => setSelected(undefined)}
          onCancelled={() => {
            setSelected(undefined);
            changed(`Cancelled the appointment of ${appointmentPatient(selected)}`);
          }}
        />
      )}
    </Stack>
  );
}

function BookSlotModal(props: {
  slot: Slot;
  locale?: string;
  onClose: () => void;
  onBooked: (a: Appointment) => void;
}): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [patient, setPatient] = useState<Reference | undefined>();
  const [reason, setReason] = useState('');
  const when = slotLabel(new Date(props.slot.start), props.locale);
  const book = action.submit(async () => {
    if (!patient?.reference) throw new Error('Choose the patient to book for');
    const booked = await client.bookAppointment({
      slot: `Slot/${props.slot.id}`,
      patient: patient.reference,
      appointment: reason.trim() ? { description: reason.trim() } : undefined,
    });
    client.invalidateSearches('Appointment');
    props.onBooked(booked);
  });
  return (
    <Modal opened onClose={props.onClose} title={`Book ${when}`}>
      <form onSubmit={book} aria-label="Book the slot">
        <Stack gap="sm">
          <ReferenceInput label="Patient" targetTypes={['Patient']} value={patient} onChange={setPatient} required />
          <TextInput label="Reason for visit" value={reason} onChange={(e) => setReason(e.currentTarget.value)} />
          <OperationOutcomeAlert error={action.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={props.onClose}>
              Close
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

function AppointmentModal(props: {
  appointment: Appointment;
  freeSlots: Slot[];
  locale?: string;
  moving: ReturnType<typeof useAction>;
  onMove: (slot: Slot) => void;
  onClose: () => void;
  onCancelled: () => void;
}): ReactNode {
  const { appointment, locale } = props;
  const client = useHearth();
  const cancel = useAction();
  const [target, setTarget] = useState<string | null>(null);
  const [reason, setReason] = useState('');
  const who = appointmentPatient(appointment);
  const active = ['proposed', 'pending', 'booked'].includes(appointment.status);
  const doCancel = cancel.submit(async () => {
    await client.cancelAppointment(appointment.id as string, reason.trim() || undefined);
    client.invalidateSearches('Appointment');
    props.onCancelled();
  });
  return (
    <Modal opened onClose={props.onClose} title={who}>
      <Stack gap="sm">
        <Text size="sm">
          {appointment.start ? slotLabel(new Date(appointment.start), locale) : ''} ·{' '}
          {STATUS_LABELS[appointment.status] ?? appointment.status}
        </Text>
        {appointment.description && <Text size="sm">{appointment.description}</Text>}
        {active && (
          <>
            <Group align="flex-end" gap="xs" wrap="wrap">
              <Select
                label="Move to…"
                placeholder={props.freeSlots.length ? 'Choose a free slot' : 'No free slot this week'}
                data={props.freeSlots.map((s) => ({
                  value: s.id as string,
                  label: slotLabel(new Date(s.start), locale),
                }))}
                value={target}
                onChange={setTarget}
                style={{ flex: 1, minWidth: 200 }}
                comboboxProps={{ withinPortal: true }}
              />
              <Button
                disabled={!target}
                loading={props.moving.busy}
                onClick={() => {
                  const slot = props.freeSlots.find((s) => s.id === target);
                  if (slot) props.onMove(slot);
                }}
              >
                Move
              </Button>
            </Group>
            <OperationOutcomeAlert error={props.moving.error} />
            <form onSubmit={doCancel} aria-label="Cancel the appointment">
              <Group align="flex-end" gap="xs" wrap="wrap">
                <TextInput
                  label="Reason for cancelling"
                  value={reason}
                  onChange={(e) => setReason(e.currentTarget.value)}
                  style={{ flex: 1, minWidth: 200 }}
                />
                <Button type="submit" color="red" variant="light" loading={cancel.busy}>
                  Cancel appointment
                </Button>
              </Group>
              <OperationOutcomeAlert error={cancel.error} />
            </form>
          </>
        )}
      </Stack>
    </Modal>
  );
}
