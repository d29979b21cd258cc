import { describe, expect, it } from 'vitest';
import type { OperationOutcomeError } from '../outcome.js';
import {
  AVAILABILITY_URL,
  availabilityExtension,
  availabilityOf,
  exceptionRange,
  type Availability,
} from './availability.js';
import { planSlots } from './plan.js';
import { localDate, zonedToEpoch } from './zoned-time.js';

const iso = (ms: number) => new Date(ms).toISOString();

describe('zonedToEpoch', () => {
  it('converts wall-clock times in a zone, summer and winter', () => {
    expect(iso(zonedToEpoch({ year: 2026, month: 1, day: 5, hour: 9, minute: 0, second: 0 }, 'Europe/Paris'))).toBe(
      '2026-01-05T08:00:00.000Z',
    );
    expect(iso(zonedToEpoch({ year: 2026, month: 7, day: 6, hour: 9, minute: 0, second: 0 }, 'Europe/Paris'))).toBe(
      '2026-07-06T07:00:00.000Z',
    );
    expect(iso(zonedToEpoch({ year: 2026, month: 7, day: 6, hour: 9, minute: 30, second: 0 }, 'UTC'))).toBe(
      '2026-07-06T09:30:00.000Z',
    );
  });

  it('moves a time in the spring-forward gap forward and takes the first of a fall-back overlap', () => {
    // 2024-03-10 02:30 does not exist in New York (clocks jump 02:00 → 03:00 EDT).
    expect(
      iso(zonedToEpoch({ year: 2024, month: 3, day: 10, hour: 2, minute: 30, second: 0 }, 'America/New_York')),
    ).toBe('2024-03-10T07:30:00.000Z');
    // 2024-11-03 01:30 is shown twice: first in EDT (-4).
    expect(
      iso(zonedToEpoch({ year: 2024, month: 11, day: 3, hour: 1, minute: 30, second: 0 }, 'America/New_York')),
    ).toBe('2024-11-03T05:30:00.000Z');
  });

  it('gives the local date of an instant', () => {
    expect(localDate(Date.parse('2026-01-05T23:30:00Z'), 'Europe/Paris')).toBe('2026-01-06');
    expect(localDate(Date.parse('2026-01-05T23:30:00Z'), 'America/Los_Angeles')).toBe('2026-01-05');
  });
});

const weekdays: Availability = {
  timeZone: 'Europe/Paris',
  slotMinutes: 30,
  availableTime: [{ daysOfWeek: ['mon', 'wed'], startMinute: 9 * 60, endMinute: 11 * 60 + 15 }],
  notAvailableTime: [],
};

describe('availabilityOf', () => {
  it('reads back what availabilityExtension writes', () => {
    const withException: Availability = {
      ...weekdays,
      notAvailableTime: [{ description: 'Holiday', start: '2026-12-24', end: '2026-12-26' }],
    };
    const ext = availabilityExtension(withException);
    expect(ext.url).toBe(AVAILABILITY_URL);
    expect(availabilityOf({ extension: [{ url: 'other' }, ext] })).toEqual(withException);
    expect(availabilityOf({})).toBeUndefined();
  });

  it('names the element of each mistake', () => {
    const problem = (patch: (e: { extension: { url: string; [k: string]: unknown }[] }) => void) => {
      const ext = availabilityExtension(weekdays) as {
        url: string;
        extension: { url: string; [k: string]: unknown }[];
      };
      patch(ext);
      try {
        availabilityOf({ extension: [ext] });
      } catch (e) {
        const issue = (e as OperationOutcomeError).outcome.issue[0];
        return `${issue.expression?.[0]}: ${issue.diagnostics ?? issue.details?.text}`;
      }
      return 'no error';
    };
    expect(problem((e) => (e.extension[0].valueCode = 'Mars/Olympus'))).toMatch(
      /^Schedule\.extension\[0\]\.extension\[0\]\.valueCode: .*IANA time zone/,
    );
    expect(problem((e) => (e.extension[1].valuePositiveInt = 3))).toMatch(/extension\[1\].*5 to 720/);
    expect(
      problem((e) => {
        const hours = e.extension[2] as unknown as { extension: { url: string; valueTime?: string }[] };
        hours.extension[hours.extension.length - 1].valueTime = '08:00:00';
      }),
    ).toMatch(/availableEndTime must be after availableStartTime/);
    expect(problem((e) => e.extension.splice(2, 1))).toMatch(/needs at least one availableTime/);
    expect(problem((e) => e.extension.push({ url: 'colour', valueString: 'red' }))).toMatch(
      /extension\[3\]: the availability/,
    );
    // An exception that ends before it starts: as dates (the end day included), and as dateTimes.
    const during = (start: string, end: string) => (e: { extension: { url: string; [k: string]: unknown }[] }) =>
      e.extension.push({
        url: 'notAvailableTime',
        extension: [{ url: 'during', valuePeriod: { start, end } }],
      } as never);
    expect(problem(during('2026-03-05', '2026-03-04'))).toMatch(
      /^Schedule\.extension\[0\]\.extension\[3\]: .*during ends before it starts/,
    );
    expect(problem(during('2026-03-04T14:00:00+01:00', '2026-03-04T13:00:00+01:00'))).toMatch(/ends before it starts/);
    expect(problem(during('2026-03-04', '2026-03-04'))).toBe('no error');
  });
});

describe('planSlots', () => {
  it('walks the working hours of the listed days, leaving out a slot that would overrun', () => {
    // Monday 2026-03-02 to Thursday.
    const slots = planSlots(weekdays, Date.parse('2026-03-02T00:00:00Z'), Date.parse('2026-03-05T00:00:00Z'));
    expect(slots.map((s) => iso(s.start))).toEqual([
      '2026-03-02T08:00:00.000Z',
      '2026-03-02T08:30:00.000Z',
      '2026-03-02T09:00:00.000Z',
      '2026-03-02T09:30:00.000Z',
      '2026-03-04T08:00:00.000Z',
      '2026-03-04T08:30:00.000Z',
      '2026-03-04T09:00:00.000Z',
      '2026-03-04T09:30:00.000Z',
    ]);
    expect(slots.every((s) => s.end - s.start === 30 * 60_000 && s.status === 'free')).toBe(true);
  });

  it('keeps local times across a daylight-saving change (Paris, 29 March 2026)', () => {
    const slots = planSlots(
      { ...weekdays, availableTime: [{ daysOfWeek: ['mon'], startMinute: 540, endMinute: 570 }] },
      Date.parse('2026-03-23T00:00:00Z'),
      Date.parse('2026-04-01T00:00:00Z'),
    );
    expect(slots.map((s) => iso(s.start))).toEqual(['2026-03-23T08:00:00.000Z', '2026-03-30T07:00:00.000Z']);
  });

  it('marks slots an exception covers busy-unavailable, whole days for dates', () => {
    const a: Availability = {
      ...weekdays,
      notAvailableTime: [
        { description: 'Training', start: '2026-03-02T09:30:00+01:00', end: '2026-03-02T10:00:00+01:00' },
        { description: 'Closed', start: '2026-03-04', end: '2026-03-04' },
      ],
    };
    const slots = planSlots(a, Date.parse('2026-03-02T00:00:00Z'), Date.parse('2026-03-05T00:00:00Z'));
    expect(slots.map((s) => `${iso(s.start).slice(5, 16)} ${s.status} ${s.comment ?? ''}`.trim())).toEqual([
      '03-02T08:00 free',
      '03-02T08:30 busy-unavailable Training',
      '03-02T09:00 free',
      '03-02T09:30 free',
      '03-04T08:00 busy-unavailable Closed',
      '03-04T08:30 busy-unavailable Closed',
      '03-04T09:00 busy-unavailable Closed',
      '03-04T09:30 busy-unavailable Closed',
    ]);
    expect(exceptionRange({ start: '2026-03-04', end: '2026-03-04' }, 'Europe/Paris').map(iso)).toEqual([
      '2026-03-03T23:00:00.000Z',
      '2026-03-04T23:00:00.000Z',
    ]);
  });

  it('starts mid-window and merges overlapping hours', () => {
    const a: Availability = {
      ...weekdays,
      availableTime: [
        { daysOfWeek: ['mon'], startMinute: 540, endMinute: 600 },
        { daysOfWeek: ['mon'], startMinute: 570, endMinute: 630 },
      ],
    };
    const slots = planSlots(a, Date.parse('2026-03-02T08:20:00Z'), Date.parse('2026-03-03T00:00:00Z'));
    expect(slots.map((s) => iso(s.start).slice(11, 16))).toEqual(['08:30', '09:00']);
  });
});
