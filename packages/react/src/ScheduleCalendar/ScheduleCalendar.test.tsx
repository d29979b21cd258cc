// @vitest-environment jsdom
import type { Appointment, Slot } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../test/render.js';
import { addDays, startOfWeek } from '../WeekCalendar/week.js';
import { ScheduleCalendar } from './ScheduleCalendar.js';

const nextWeek = startOfWeek(addDays(new Date(), 7));
const at = (day: number, hour: number, minute = 0) =>
  new Date(nextWeek.getFullYear(), nextWeek.getMonth(), nextWeek.getDate() + day, hour, minute);
const slot = (id: string, start: Date, status: Slot['status'] = 'free'): Slot => ({
  resourceType: 'Slot',
  id,
  schedule: { reference: 'Schedule/s1' },
  status,
  start: start.toISOString(),
  end: new Date(start.getTime() + 30 * 60_000).toISOString(),
});

function scenario() {
  const slots = [slot('s1', at(0, 9), 'busy'), slot('s2', at(0, 9, 30)), slot('s3', at(1, 10))];
  let appointment: Appointment = {
    resourceType: 'Appointment',
    id: 'a1',
    status: 'booked',
    start: slots[0].start,
    end: slots[0].end,
    slot: [{ reference: 'Slot/s1' }],
    participant: [{ actor: { reference: 'Patient/p1', display: 'Ada Lovelace' }, status: 'accepted' }],
  };
  const mock = mockClient({
    'GET /fhir/R4/Slot': () => bundle(slots),
    'GET /fhir/R4/Appointment': () => bundle(appointment.status === 'cancelled' ? [] : [appointment]),
    'POST /fhir/R4/Appointment/a1/$reschedule': (req) => {
      const target = (req.body as { parameter: { valueReference: { reference: string } }[] }).parameter[0]
        .valueReference.reference;
      const to = slots.find((s) => `Slot/${s.id}` === target) as Slot;
      if (to.id === 's3')
        return new Reply(409, {
          resourceType: 'OperationOutcome',
          issue: [
            { severity: 'error', code: 'conflict', details: { text: 'Slot/s3 was just booked by someone else' } },
          ],
        });
      slots[0].status = 'free';
      to.status = 'busy';
      appointment = { ...appointment, start: to.start, end: to.end, slot: [{ reference: `Slot/${to.id}` }] };
      return appointment;
    },
    'POST /fhir/R4/Appointment/a1/$cancel': () => {
      appointment = { ...appointment, status: 'cancelled' };
      slots.forEach((s) => s.id === appointment.slot?.[0].reference?.split('/')[1] && (s.status = 'free'));
      return appointment;
    },
  });
  return { ...mock, slots };
}

describe('ScheduleCalendar', () => {
  it('shows the week by status, moves with "Move to…", reports a taken slot, and cancels', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = scenario();
    renderWithHearth(<ScheduleCalendar scheduleId="s1" initialWeek={nextWeek} locale="en-US" />, client);
    const monday = await screen.findByRole('region', { name: /^Monday/ });
    const appointment = await within(monday).findByRole('button', { name: /^Ada Lovelace.*Booked/ });
    within(monday).getByRole('button', { name: /^9:30 AM Free slot, Monday/ });
    // The busy slot under the appointment is drawn as the appointment alone.
    expect(within(monday).getAllByRole('button')).toHaveLength(2);
    const searched = requests.find((r) => r.url.pathname.endsWith('/Appointment'));
    expect(searched?.url.searchParams.get('slot.schedule')).toBe('Schedule/s1');

    await user.click(appointment);
    const dialog = await screen.findByRole('dialog', { name: 'Ada Lovelace' });
    await user.click(within(dialog).getByRole('textbox', { name: 'Move to…' }));
    await user.click(await screen.findByRole('option', { name: /^Tuesday, .*10:00 AM$/ }));
    await user.click(within(dialog).getByRole('button', { name: 'Move' }));
    await within(dialog).findByText('Slot/s3 was just booked by someone else');

    await user.click(within(dialog).getByRole('textbox', { name: 'Move to…' }));
    await user.click(await screen.findByRole('option', { name: /^Monday, .*9:30 AM$/ }));
    await user.click(within(dialog).getByRole('button', { name: 'Move' }));
    await screen.findByText(/^Moved Ada Lovelace to Monday, .*9:30 AM$/);
    await within(monday).findByRole('button', { name: /^9:00 AM Free slot/ });
    await within(monday).findByRole('button', { name: /^Ada Lovelace.*9:30 AM–.*Booked/ });

    await user.click(within(monday).getByRole('button', { name: /^Ada Lovelace/ }));
    const again = await screen.findByRole('dialog', { name: 'Ada Lovelace' });
    await user.type(within(again).getByRole('textbox', { name: 'Reason for cancelling' }), 'Called in');
    await user.click(within(again).getByRole('button', { name: 'Cancel appointment' }));
    await screen.findByText('Cancelled the appointment of Ada Lovelace');
    await within(monday).findByRole('button', { name: /^9:30 AM Free slot/ });
    await waitFor(() => expect(within(monday).queryByRole('button', { name: /^Ada Lovelace/ })).toBeNull());
    const cancel = requests.find((r) => r.url.pathname.endsWith('$cancel'));
    expect(cancel?.body).toEqual({
      resourceType: 'Parameters',
      parameter: [{ name: 'reason', valueString: 'Called in' }],
    });
  });

  it('books a free slot for the patient chosen', async () => {
    const user = userEvent.setup({ delay: null });
    const { slots } = scenario();
    const booked: Appointment[] = [];
    const withBooking = mockClient({
      'GET /fhir/R4/Slot': () => bundle(slots),
      'GET /fhir/R4/Appointment': () => bundle(booked),
      'GET /fhir/R4/Patient': () =>
        bundle([{ resourceType: 'Patient', id: 'p2', name: [{ given: ['Bob'], family: 'Builder' }] }]),
      'POST /fhir/R4/Appointment/$book': (req) => {
        const params = (req.body as { parameter: { name: string; valueReference?: { reference: string } }[] })
          .parameter;
        const a: Appointment = {
          resourceType: 'Appointment',
          id: 'a2',
          status: 'booked',
          start: slots[2].start,
          end: slots[2].end,
          slot: [{ reference: params[0].valueReference?.reference as string }],
          participant: [{ actor: { reference: 'Patient/p2', display: 'Bob Builder' }, status: 'accepted' }],
        };
        slots[2].status = 'busy';
        booked.push(a);
        return new Reply(201, a);
      },
    });
    renderWithHearth(<ScheduleCalendar scheduleId="s1" initialWeek={nextWeek} locale="en-US" />, withBooking.client);
    const tuesday = await screen.findByRole('region', { name: /^Tuesday/ });
    await user.click(await within(tuesday).findByRole('button', { name: /^10:00 AM Free slot/ }));
    const form = await screen.findByRole('form', { name: 'Book the slot' });
    await user.type(within(form).getByRole('textbox', { name: 'Patient' }), 'Bob');
    await user.click(await screen.findByRole('option', { name: 'Bob Builder' }));
    await user.type(within(form).getByRole('textbox', { name: 'Reason for visit' }), 'Back pain');
    await user.click(within(form).getByRole('button', { name: 'Book' }));
    await screen.findByText(/^Booked Bob Builder on Tuesday/);
    await within(tuesday).findByRole('button', { name: /^Bob Builder/ });
    const book = withBooking.requests.find((r) => r.url.pathname.endsWith('$book'));
    expect(book?.body).toMatchObject({
      parameter: [
        { name: 'slot', valueReference: { reference: 'Slot/s3' } },
        { name: 'patient', valueReference: { reference: 'Patient/p2' } },
        { name: 'appointment', resource: { description: 'Back pain' } },
      ],
    });
  });
});
