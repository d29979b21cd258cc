import { availabilityExtension, type Availability, type Schedule } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { draftAvailability, scheduleDraft, type AvailabilityDraft, type TimeOffDraft } from './availability-draft.js';

const draft: AvailabilityDraft = {
  hours: [{ days: ['mon'], from: '09:00', to: '12:00' }],
  timeOff: [],
  slotMinutes: 20,
  timeZone: 'Europe/Paris',
};
const off = (patch: Partial<TimeOffDraft>): TimeOffDraft => ({
  description: '',
  startDate: '',
  endDate: '',
  startTime: '',
  endTime: '',
  ...patch,
});

describe('draftAvailability', () => {
  it('gives the availability, or what is wrong with the hours and the slot length', () => {
    expect(draftAvailability(draft)).toEqual({
      timeZone: 'Europe/Paris',
      slotMinutes: 20,
      availableTime: [{ daysOfWeek: ['mon'], startMinute: 540, endMinute: 720 }],
      notAvailableTime: [],
    });
    const hours = (patch: object) => ({ ...draft, hours: [{ ...draft.hours[0], ...patch }] });
    expect(draftAvailability(hours({ days: [] }))).toBe('Choose at least one working day');
    expect(draftAvailability(hours({ to: '08:00' }))).toBe('Working hours must end after they start');
    expect(draftAvailability({ ...draft, slotMinutes: 2 })).toBe('Slot length must be 5 to 720 minutes');
    expect(draftAvailability(hours({ to: '09:10' }))).toBe('Working hours are shorter than one slot');
    expect(draftAvailability({ ...draft, hours: [] })).toBe('Give at least one set of working hours');
  });

  it('takes several sets of hours, naming the one that is wrong', () => {
    const split = {
      ...draft,
      hours: [
        { days: ['mon', 'tue'], from: '08:00', to: '12:00' },
        { days: ['mon'], from: '14:00', to: '13:00' },
      ],
    };
    expect(draftAvailability(split)).toBe('Working hours 2: Working hours must end after they start');
    split.hours[1].to = '18:00';
    expect((draftAvailability(split) as Availability).availableTime).toEqual([
      { daysOfWeek: ['mon', 'tue'], startMinute: 480, endMinute: 720 },
      { daysOfWeek: ['mon'], startMinute: 840, endMinute: 1080 },
    ]);
  });

  it('turns time off into exceptions: whole days as dates, times as instants in the zone, an open end', () => {
    const a = draftAvailability({
      ...draft,
      timeOff: [
        off({ description: ' Christmas ', startDate: '2026-12-24', endDate: '2026-12-26' }),
        // 14:00 to 16:30 in Paris (UTC+1 in winter).
        off({
          description: 'Training',
          startDate: '2026-03-04',
          startTime: '14:00',
          endDate: '2026-03-04',
          endTime: '16:30',
        }),
        off({ startDate: '2026-06-01' }),
      ],
    }) as Availability;
    expect(a.notAvailableTime).toEqual([
      { description: 'Christmas', start: '2026-12-24', end: '2026-12-26' },
      { description: 'Training', start: '2026-03-04T13:00:00.000Z', end: '2026-03-04T15:30:00.000Z' },
      { start: '2026-06-01' },
    ]);
  });

  it('says which time off is wrong and how', () => {
    const fine = off({ startDate: '2026-03-01' });
    expect(draftAvailability({ ...draft, timeOff: [fine, off({ description: 'Blank' })] })).toBe(
      'Time off 2: give its first day, its last day or both',
    );
    const only = (t: TimeOffDraft) => draftAvailability({ ...draft, timeOff: [t] });
    expect(only(off({ startDate: '2026-03-05', endDate: '2026-03-04' }))).toBe('Time off 1 ends before it starts');
    expect(only(off({ startDate: '2026-03-04', startTime: '15:00', endDate: '2026-03-04', endTime: '14:00' }))).toBe(
      'Time off 1 ends before it starts',
    );
    expect(only(off({ startTime: '15:00', endDate: '2026-03-04' }))).toBe('Time off 1: a time needs its day');
    // The same day, from a time to its end: fine.
    expect(typeof only(off({ startDate: '2026-03-04', startTime: '15:00', endDate: '2026-03-04' }))).toBe('object');
  });
});

describe('scheduleDraft', () => {
  it("reads a schedule's availability back into the same fields, in the schedule's zone", () => {
    const availability: Availability = {
      timeZone: 'America/New_York',
      slotMinutes: 15,
      availableTime: [
        { daysOfWeek: ['mon', 'wed'], startMinute: 8 * 60 + 30, endMinute: 12 * 60 },
        { daysOfWeek: ['fri'], startMinute: 13 * 60, endMinute: 17 * 60 },
      ],
      notAvailableTime: [
        { description: 'Holiday', start: '2026-07-03', end: '2026-07-03' },
        // 09:00 to 11:00 in New York (UTC-4 in summer).
        { description: 'Meeting', start: '2026-07-08T13:00:00.000Z', end: '2026-07-08T15:00:00.000Z' },
      ],
    };
    const schedule = {
      resourceType: 'Schedule',
      actor: [{ reference: 'Practitioner/p1' }],
      extension: [availabilityExtension(availability)],
    } as Schedule;
    const fields = scheduleDraft(schedule, 'UTC');
    expect(fields).toEqual({
      timeZone: 'America/New_York',
      slotMinutes: 15,
      hours: [
        { days: ['mon', 'wed'], from: '08:30', to: '12:00' },
        { days: ['fri'], from: '13:00', to: '17:00' },
      ],
      timeOff: [
        off({ description: 'Holiday', startDate: '2026-07-03', endDate: '2026-07-03' }),
        off({
          description: 'Meeting',
          startDate: '2026-07-08',
          startTime: '09:00',
          endDate: '2026-07-08',
          endTime: '11:00',
        }),
      ],
    });
    expect(draftAvailability(fields)).toEqual(availability);
  });

  it('gives a new schedule the defaults, and throws on a malformed extension', () => {
    expect(scheduleDraft(undefined, 'Europe/Oslo')).toMatchObject({
      timeZone: 'Europe/Oslo',
      slotMinutes: 30,
      timeOff: [],
    });
    const broken = {
      resourceType: 'Schedule',
      actor: [],
      extension: [{ url: 'https://hearth.dev/fhir/StructureDefinition/availability', extension: [] }],
    } as unknown as Schedule;
    expect(() => scheduleDraft(broken, 'UTC')).toThrow(/timeZone/);
  });
});
