// @vitest-environment jsdom
import { AVAILABILITY_URL, availabilityExtension, availabilityOf, type Schedule } from '@hearth/core';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../test/render.js';
import { AvailabilityForm } from './AvailabilityForm.js';

const generated = (created: number, updated = 0, deleted = 0) => ({
  resourceType: 'Parameters',
  parameter: [
    { name: 'created', valueInteger: created },
    { name: 'updated', valueInteger: updated },
    { name: 'deleted', valueInteger: deleted },
    { name: 'unchanged', valueInteger: 0 },
    { name: 'skipped', valueInteger: 0 },
  ],
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
      'POST /fhir/R4/Schedule/new/$generate-slots': () => generated(40),
    });
    const onSaved = vi.fn();
    renderWithHearth(<AvailabilityForm onSaved={onSaved} />, client);
    const form = screen.getByRole('form', { name: 'New schedule' });
    within(form).getByText('None: every working day is open.');
    await user.click(within(form).getByRole('textbox', { name: 'Practitioner' }));
    await user.click(await screen.findByRole('option', { name: 'Dr Who' }));
    await user.click(within(form).getByRole('checkbox', { name: 'Friday' }));
    await user.clear(within(form).getByLabelText('Ends at'));
    await user.type(within(form).getByLabelText('Ends at'), '13:00');
    await user.click(within(form).getByRole('button', { name: 'Create schedule and slots' }));
    await waitFor(() =>
      expect(onSaved).toHaveBeenCalledWith(expect.objectContaining({ id: 'new' }), {
        created: 40,
        updated: 0,
        deleted: 0,
        unchanged: 0,
        skipped: 0,
      }),
    );
    expect(stored?.actor).toEqual([{ reference: 'Practitioner/d1', display: 'Dr Who' }]);
    expect(stored?.extension?.[0].url).toBe(AVAILABILITY_URL);
    expect(availabilityOf(stored as never)).toMatchObject({
      availableTime: [{ daysOfWeek: ['mon', 'tue', 'wed', 'thu'], startMinute: 540, endMinute: 780 }],
      notAvailableTime: [],
    });
    expect(requests.some((r) => r.url.pathname.endsWith('$generate-slots'))).toBe(true);
  });

  it("edits a schedule's hours, slot length and time off, then updates its slots", async () => {
    const user = userEvent.setup({ delay: null });
    const schedule = {
      resourceType: 'Schedule',
      id: 's1',
      meta: { versionId: '3' },
      active: true,
      actor: [{ reference: 'Practitioner/d1', display: 'Dr Who' }],
      planningHorizon: { start: '2026-01-01T00:00:00Z', end: new Date(Date.now() + 3 * 7 * 86_400_000).toISOString() },
      extension: [
        { url: 'http://example.org/other', valueString: 'kept' },
        availabilityExtension({
          timeZone: 'UTC',
          slotMinutes: 30,
          availableTime: [{ daysOfWeek: ['mon', 'tue'], startMinute: 540, endMinute: 720 }],
          notAvailableTime: [{ description: 'Holiday', start: '2026-12-24', end: '2026-12-26' }],
        }),
      ],
    } as Schedule;
    let stored: Schedule | undefined;
    const { client, requests } = mockClient({
      'PUT /fhir/R4/Schedule/s1': (req) => {
        stored = { ...(req.body as Schedule), meta: { versionId: '4' } };
        return stored;
      },
      'POST /fhir/R4/Schedule/s1/$generate-slots': () => generated(2, 5, 1),
    });
    const onSaved = vi.fn();
    renderWithHearth(<AvailabilityForm schedule={schedule} onSaved={onSaved} />, client);
    const form = screen.getByRole('form', { name: 'Availability of the schedule' });
    // The practitioner is the schedule's: not asked again.
    expect(within(form).queryByRole('textbox', { name: 'Practitioner' })).toBeNull();
    expect((within(form).getByLabelText('Starts at') as HTMLInputElement).value).toBe('09:00');
    expect((within(form).getByRole('checkbox', { name: 'Tuesday' }) as HTMLInputElement).checked).toBe(true);
    expect((within(form).getByRole('textbox', { name: 'Weeks to open' }) as HTMLInputElement).value).toBe('3');
    const holiday = within(form).getByRole('group', { name: 'Time off 1' });
    expect((within(holiday).getByLabelText('Reason') as HTMLInputElement).value).toBe('Holiday');
    expect((within(holiday).getByLabelText('Last day off') as HTMLInputElement).value).toBe('2026-12-26');

    // 20-minute slots, a lunch-time training on 4 March, and afternoons on Mondays too. Fields are
    // filled with change events: typing each character through Mantine is slow under jsdom.
    const fill = (input: HTMLElement, value: string) => fireEvent.change(input, { target: { value } });
    fill(within(form).getByRole('textbox', { name: 'Slot length (minutes)' }), '20');
    await user.click(within(form).getByRole('button', { name: 'Add time off' }));
    const training = within(form).getByRole('group', { name: 'Time off 2' });
    fill(within(training).getByLabelText('Reason'), 'Training');
    fill(within(training).getByLabelText('First day off'), '2026-03-04');
    // The last day follows the first.
    expect((within(training).getByLabelText('Last day off') as HTMLInputElement).value).toBe('2026-03-04');
    fill(within(training).getByLabelText('From time'), '12:00');
    fill(within(training).getByLabelText('Until time'), '11:00');
    await user.click(within(form).getByRole('button', { name: 'Add working hours' }));
    const afternoons = within(form).getByRole('group', { name: 'Working hours 2' });
    await user.click(within(afternoons).getByRole('checkbox', { name: 'Monday' }));
    fill(within(afternoons).getByLabelText('Starts at'), '14:00');
    fill(within(afternoons).getByLabelText('Ends at'), '16:00');

    // What is wrong is said before anything is sent.
    await user.click(within(form).getByRole('button', { name: 'Save and update slots' }));
    await within(form).findByText('Time off 2 ends before it starts');
    expect(requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    fill(within(training).getByLabelText('Until time'), '13:30');
    await user.click(within(form).getByRole('button', { name: 'Save and update slots' }));
    await waitFor(() =>
      expect(onSaved).toHaveBeenCalledWith(
        expect.objectContaining({ id: 's1' }),
        expect.objectContaining({ created: 2, updated: 5, deleted: 1 }),
      ),
    );
    const put = requests.find((r) => r.method === 'PUT');
    expect(put?.headers.get('if-match')).toBe('W/"3"');
    expect(stored?.extension?.[0]).toEqual({ url: 'http://example.org/other', valueString: 'kept' });
    expect(availabilityOf(stored as never)).toEqual({
      timeZone: 'UTC',
      slotMinutes: 20,
      availableTime: [
        { daysOfWeek: ['mon', 'tue'], startMinute: 540, endMinute: 720 },
        { daysOfWeek: ['mon'], startMinute: 840, endMinute: 960 },
      ],
      notAvailableTime: [
        { description: 'Holiday', start: '2026-12-24', end: '2026-12-26' },
        { description: 'Training', start: '2026-03-04T12:00:00.000Z', end: '2026-03-04T13:30:00.000Z' },
      ],
    });
    // Removing time off takes it out of what is saved.
    await user.click(within(form).getByRole('button', { name: 'Remove time off 1' }));
    expect(within(form).queryByRole('group', { name: 'Time off 2' })).toBeNull();
    expect(
      (within(form).getByRole('group', { name: 'Time off 1' }).querySelector('input') as HTMLInputElement).value,
    ).toBe('Training');
  });

  it('shows an availability it cannot read, and starts from the defaults', () => {
    const { client } = mockClient({});
    const broken = {
      resourceType: 'Schedule',
      id: 's2',
      actor: [{ display: 'Room 1' }],
      extension: [{ url: AVAILABILITY_URL, extension: [{ url: 'timeZone', valueCode: 'Nowhere/Land' }] }],
    } as Schedule;
    renderWithHearth(<AvailabilityForm schedule={broken} onSaved={() => undefined} />, client);
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain("The schedule's availability could not be read");
    expect(alert.textContent).toContain('IANA time zone');
    expect((screen.getByLabelText('Ends at') as HTMLInputElement).value).toBe('17:00');
  });
});
