// @vitest-environment jsdom
import { AVAILABILITY_URL, availabilityOf, type Schedule } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../test/render.js';
import { AvailabilityForm, draftAvailability } from './AvailabilityForm.js';

describe('draftAvailability', () => {
  const draft = { days: ['mon'], from: '09:00', to: '12:00', slotMinutes: 20, timeZone: 'Europe/Paris' };
  it('gives the availability, or what is wrong', () => {
    expect(draftAvailability(draft)).toEqual({
      timeZone: 'Europe/Paris',
      slotMinutes: 20,
      availableTime: [{ daysOfWeek: ['mon'], startMinute: 540, endMinute: 720 }],
      notAvailableTime: [],
    });
    expect(draftAvailability({ ...draft, days: [] })).toBe('Choose at least one working day');
    expect(draftAvailability({ ...draft, to: '08:00' })).toBe('Working hours must end after they start');
    expect(draftAvailability({ ...draft, slotMinutes: 2 })).toBe('Slot length must be 5 to 720 minutes');
    expect(draftAvailability({ ...draft, to: '09:10' })).toBe('Working hours are shorter than one slot');
  });
});

describe('AvailabilityForm', () => {
  it('creates the Schedule with its availability and generates its slots', async () => {
    const user = userEvent.setup({ delay: null });
    let stored: Schedule | undefined;
    const { client, requests } = mockClient({
      'GET /fhir/R4/Practitioner': () =>
        bundle([{ resourceType: 'Practitioner', id: 'd1', name: [{ text: 'Dr Who' }] }]),
      'GET /fhir/R4/Location': () => bundle([]),
      'POST /fhir/R4/Schedule': (req) => {
        stored = { ...(req.body as Schedule), id: 'new' };
        return new Reply(201, stored);
      },
      'POST /fhir/R4/Schedule/new/$generate-slots': () => ({
        resourceType: 'Parameters',
        parameter: [{ name: 'created', valueInteger: 40 }],
      }),
    });
    const onCreated = vi.fn();
    renderWithHearth(<AvailabilityForm onCreated={onCreated} />, client);
    await user.click(screen.getByRole('textbox', { name: 'Practitioner' }));
    await user.click(await screen.findByRole('option', { name: 'Dr Who' }));
    await user.click(screen.getByRole('checkbox', { name: 'Friday' }));
    await user.clear(screen.getByLabelText('Ends at'));
    await user.type(screen.getByLabelText('Ends at'), '13:00');
    await user.click(screen.getByRole('button', { name: 'Create schedule and slots' }));
    await waitFor(() => expect(onCreated).toHaveBeenCalledWith(expect.objectContaining({ id: 'new' }), 40));
    expect(stored?.actor).toEqual([{ reference: 'Practitioner/d1', display: 'Dr Who' }]);
    expect(stored?.extension?.[0].url).toBe(AVAILABILITY_URL);
    expect(availabilityOf(stored as never)?.availableTime).toEqual([
      { daysOfWeek: ['mon', 'tue', 'wed', 'thu'], startMinute: 540, endMinute: 780 },
    ]);
    expect(requests.some((r) => r.url.pathname.endsWith('$generate-slots'))).toBe(true);
  });
});
