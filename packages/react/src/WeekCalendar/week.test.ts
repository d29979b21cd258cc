import type { Appointment, Slot } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { addDays, calendarEvents, hourRange, placeEvents, startOfWeek, weekDays } from './week.js';

const local = (y: number, m: number, d: number, h = 0, min = 0) => new Date(y, m - 1, d, h, min);
const slot = (id: string, start: Date, minutes: number, status: Slot['status'] = 'free'): Slot => ({
  resourceType: 'Slot',
  id,
  schedule: { reference: 'Schedule/s1' },
  status,
  start: start.toISOString(),
  end: new Date(start.getTime() + minutes * 60_000).toISOString(),
});

describe('week helpers', () => {
  it('starts weeks on local Monday midnight and lists seven days', () => {
    expect(startOfWeek(local(2026, 3, 4, 15, 30))).toEqual(local(2026, 3, 2));
    expect(startOfWeek(local(2026, 3, 8, 23))).toEqual(local(2026, 3, 2));
    expect(startOfWeek(local(2026, 3, 2))).toEqual(local(2026, 3, 2));
    expect(weekDays(local(2026, 3, 2)).map((d) => d.getDate())).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(addDays(local(2026, 3, 30), 3)).toEqual(local(2026, 4, 2));
  });

  it('draws appointments over their slots, leaves cancelled ones out, and shows the rest of the slots', () => {
    const monday = local(2026, 3, 2);
    const slots = [
      slot('a', local(2026, 3, 2, 9), 30, 'busy'),
      slot('b', local(2026, 3, 2, 9, 30), 30),
      slot('c', local(2026, 3, 3, 10), 30, 'busy-unavailable'),
    ];
    const appointments: Appointment[] = [
      {
        resourceType: 'Appointment',
        id: 'x',
        status: 'booked',
        start: slots[0].start,
        end: slots[0].end,
        slot: [{ reference: 'Slot/a' }],
        participant: [{ actor: { reference: 'Patient/p', display: 'Ada' }, status: 'accepted' }],
      },
      {
        resourceType: 'Appointment',
        id: 'y',
        status: 'cancelled',
        start: slots[1].start,
        end: slots[1].end,
        slot: [{ reference: 'Slot/b' }],
        participant: [],
      },
    ];
    const events = calendarEvents(slots, appointments);
    expect(events.map((e) => `${e.kind}:${e.id}:${e.status}`)).toEqual([
      'appointment:x:booked',
      'slot:b:free',
      'slot:c:busy-unavailable',
    ]);
    const hours = hourRange(events);
    expect(hours).toEqual([8, 18]);
    const placed = placeEvents(events, monday, hours);
    expect(placed.map((p) => [p.day, Math.round(p.top * 10) / 10, Math.round(p.height * 10) / 10])).toEqual([
      [0, 10, 5],
      [0, 15, 5],
      [1, 20, 5],
    ]);
    // Events of another week are not placed.
    expect(placeEvents(events, addDays(monday, 7), hours)).toEqual([]);
  });

  it('widens the hours to early and late events', () => {
    const events = calendarEvents([slot('e', local(2026, 3, 2, 6, 30), 30), slot('l', local(2026, 3, 2, 20), 45)], []);
    expect(hourRange(events)).toEqual([6, 21]);
  });
});
