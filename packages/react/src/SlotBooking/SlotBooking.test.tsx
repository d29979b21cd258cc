// @vitest-environment jsdom
import type { Appointment, Slot } from '@hearth/core';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../test/render.js';
import { slotsByDay } from './SlotBooking.js';
import { SlotBooking } from './SlotBooking.js';

const tomorrow = new Date(Date.now() + 86_400_000);
const at = (hour: number) => new Date(tomorrow.getFullYear(), tomorrow.getMonth(), tomorrow.getDate(), hour);
const slot = (id: string, hour: number): Slot => ({
  resourceType: 'Slot',
  id,
  schedule: { reference: 'Schedule/s1' },
  status: 'free',
  start: at(hour).toISOString(),
  end: new Date(at(hour).getTime() + 30 * 60_000).toISOString(),
});
const schedule = { resourceType: 'Schedule', id: 's1', actor: [{ reference: 'Practitioner/d1', display: 'Dr Who' }] };

describe('SlotBooking', () => {
  it('groups free slots by day with their practitioner', () => {
    const groups = slotsByDay(
      {
        resourceType: 'Bundle',
        type: 'searchset',
        entry: [{ resource: slot('a', 9) }, { resource: slot('b', 10) }, { resource: schedule }],
      },
      'en-US',
    );
    expect(groups).toHaveLength(1);
    expect(groups[0].slots.map((s) => [s.slot.id, s.with])).toEqual([
      ['a', 'Dr Who'],
      ['b', 'Dr Who'],
    ]);
  });

  it('books a time for the signed-in patient, tells when it was taken meanwhile, and cancels', async () => {
    const user = userEvent.setup({ delay: null });
    const free = [slot('a', 9), slot('b', 10)];
    const mine: Appointment[] = [];
    const { client, requests } = mockClient({
      'GET /fhir/R4/Practitioner': () =>
        bundle([{ resourceType: 'Practitioner', id: 'd1', name: [{ text: 'Dr Who' }] }]),
      'GET /fhir/R4/Appointment/$find': () => bundle([...free, schedule]),
      'GET /fhir/R4/Appointment': () => bundle(mine.filter((a) => a.status === 'booked')),
      'POST /fhir/R4/Appointment/$book': (req) => {
        const ref = (req.body as { parameter: { valueReference?: { reference: string } }[] }).parameter[0]
          .valueReference?.reference;
        if (ref === 'Slot/a') {
          free.splice(0, 1);
          return new Reply(409, {
            resourceType: 'OperationOutcome',
            issue: [
              { severity: 'error', code: 'conflict', details: { text: 'Slot/a was just booked by someone else' } },
            ],
          });
        }
        const s = free.splice(0, 1)[0];
        const a: Appointment = {
          resourceType: 'Appointment',
          id: 'ap1',
          status: 'booked',
          start: s.start,
          end: s.end,
          description: 'Cough',
          participant: [
            { actor: { reference: 'Patient/me' }, status: 'accepted' },
            { actor: { reference: 'Practitioner/d1', display: 'Dr Who' }, status: 'accepted' },
          ],
        };
        mine.push(a);
        return new Reply(201, a);
      },
      'POST /fhir/R4/Appointment/ap1/$cancel': () => {
        mine[0] = { ...mine[0], status: 'cancelled' };
        return mine[0];
      },
    });
    renderWithHearth(<SlotBooking locale="en-US" />, client);
    await screen.findByText('None booked.');
    await user.click(await screen.findByRole('button', { name: /^Book .*9:00 AM with Dr Who$/ }));
    let form = await screen.findByRole('form', { name: 'Confirm the booking' });
    await user.click(within(form).getByRole('button', { name: 'Book' }));
    await within(form).findByText('Slot/a was just booked by someone else');
    await user.click(within(form).getByRole('button', { name: 'Back' }));
    // The list was read again: the taken time is gone.
    await screen.findByRole('button', { name: /^Book .*10:00 AM with Dr Who$/ });
    expect(screen.queryByRole('button', { name: /^Book .*9:00 AM/ })).toBeNull();

    await user.click(screen.getByRole('button', { name: /^Book .*10:00 AM with Dr Who$/ }));
    form = await screen.findByRole('form', { name: 'Confirm the booking' });
    await user.type(within(form).getByRole('textbox', { name: 'Reason for visit' }), 'Cough');
    await user.click(within(form).getByRole('button', { name: 'Book' }));
    const list = await screen.findByRole('region', { name: 'Your upcoming appointments' });
    await within(list).findByText('Dr Who · Cough');
    const book = requests.filter((r) => r.url.pathname.endsWith('$book')).pop();
    // No patient parameter: the server books for the signed-in patient.
    expect(book?.body).toEqual({
      resourceType: 'Parameters',
      parameter: [
        { name: 'slot', valueReference: { reference: 'Slot/b' } },
        {
          name: 'appointment',
          resource: { resourceType: 'Appointment', status: 'proposed', participant: [], description: 'Cough' },
        },
      ],
    });

    await user.click(within(list).getByRole('button', { name: 'Cancel' }));
    await user.click(within(list).getByRole('button', { name: 'Yes, cancel' }));
    await screen.findByText('Appointment cancelled');
    await within(list).findByText('None booked.');
  });
});
