/**
 * FHIR dates and times as text, and ages. FHIR dates may be partial ('2024', '2024-05',
 * hl7.org/fhir/R4/datatypes.html#date); a date without a time has no time zone, so it is
 * formatted as the calendar date it names, in UTC, never shifted by the viewer's zone.
 */
import type { Period } from '@hearth/fhir-types';

const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;

/**
 * A FHIR date as text: '2024-05-17' → 'May 17, 2024' (with `{ dateStyle: 'medium' }` in en-US),
 * '2024-05' → 'May 2024', '2024' → '2024'. A dateTime is formatted as its date. '' when absent or invalid.
 */
export function formatDate(
  date: string | undefined,
  locales?: Intl.LocalesArgument,
  options?: Intl.DateTimeFormatOptions,
): string {
  if (!date) {
    return '';
  }
  const match = DATE.exec(date.slice(0, 10));
  if (!match) {
    return '';
  }
  const [, year, month, day] = match;
  if (!month) {
    return year;
  }
  const utc = new Date(Date.UTC(Number(year), Number(month) - 1, day ? Number(day) : 1));
  if (Number.isNaN(utc.getTime())) {
    return '';
  }
  const style: Intl.DateTimeFormatOptions = day ? (options ?? {}) : { year: 'numeric', month: 'long' };
  return utc.toLocaleDateString(locales, { ...style, timeZone: 'UTC' });
}

/**
 * A FHIR dateTime or instant as local text: '2024-05-17T14:30:00Z' → '5/17/2024, 2:30:00 PM' (en-US,
 * in the viewer's time zone unless `options.timeZone` says otherwise). A date without a time is
 * formatted as a date. '' when absent or invalid.
 */
export function formatDateTime(
  dateTime: string | undefined,
  locales?: Intl.LocalesArgument,
  options?: Intl.DateTimeFormatOptions,
): string {
  if (!dateTime) {
    return '';
  }
  if (DATE.test(dateTime)) {
    return formatDate(dateTime, locales, options?.dateStyle ? { dateStyle: options.dateStyle } : undefined);
  }
  const d = new Date(dateTime);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(locales, options);
}

/** A FHIR time ('14:30:00') as text: '2:30 PM' in en-US. '' when absent or invalid. */
export function formatTime(
  time: string | undefined,
  locales?: Intl.LocalesArgument,
  options: Intl.DateTimeFormatOptions = { hour: 'numeric', minute: '2-digit' },
): string {
  const match = /^(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/.exec(time ?? '');
  if (!match) {
    return '';
  }
  const d = new Date(Date.UTC(1970, 0, 1, Number(match[1]), Number(match[2]), Number(match[3] ?? 0)));
  return d.toLocaleTimeString(locales, { ...options, timeZone: 'UTC' });
}

/** A Period as 'start – end' (either side may be open). */
export function formatPeriod(
  period: Period | undefined,
  locales?: Intl.LocalesArgument,
  options?: Intl.DateTimeFormatOptions,
): string {
  if (!period || (!period.start && !period.end)) {
    return '';
  }
  return `${formatDateTime(period.start, locales, options)} – ${formatDateTime(period.end, locales, options)}`.trim();
}

/** An age in whole calendar years, months (beyond the years) and days (beyond the months). */
export interface CalendarAge {
  years: number;
  months: number;
  days: number;
}

function calendarDate(text: string | Date): [number, number, number] | undefined {
  if (text instanceof Date) {
    return [text.getFullYear(), text.getMonth() + 1, text.getDate()];
  }
  const match = DATE.exec(text.slice(0, 10));
  if (!match) {
    return undefined;
  }
  return [Number(match[1]), Number(match[2] ?? 1), Number(match[3] ?? 1)];
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The date `months` months after `start`, on the same day, or the month's last day when it is shorter. */
function addMonths(start: [number, number, number], months: number): [number, number, number] {
  const index = start[0] * 12 + (start[1] - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  return [year, month, Math.min(start[2], daysInMonth(year, month))];
}

function utcDay(d: [number, number, number]): number {
  return Date.UTC(d[0], d[1] - 1, d[2]) / 86_400_000;
}

/**
 * The age on `endDate` (default: today) of someone born on `birthDate`, in calendar terms: the
 * whole months to the last monthly anniversary (on the month's last day when the birth day does
 * not exist in it: born 2000-01-31, one month old on 2000-02-29), then the days since. Undefined
 * for an invalid date or an end before the birth.
 */
export function calculateAge(birthDate: string, endDate: string | Date = new Date()): CalendarAge | undefined {
  const start = calendarDate(birthDate);
  const end = calendarDate(endDate);
  if (!start || !end || utcDay(end) < utcDay(start)) {
    return undefined;
  }
  let months = (end[0] - start[0]) * 12 + (end[1] - start[1]);
  if (utcDay(addMonths(start, months)) > utcDay(end)) {
    months--;
  }
  const days = utcDay(end) - utcDay(addMonths(start, months));
  return { years: Math.floor(months / 12), months: months % 12, days };
}

/**
 * The age as the HL7 age string: whole years from 2 years on ('042Y'), months under 2 years
 * ('018M'), days under a month ('012D'). Undefined for an invalid date.
 */
export function calculateAgeString(birthDate: string, endDate: string | Date = new Date()): string | undefined {
  const age = calculateAge(birthDate, endDate);
  if (!age) {
    return undefined;
  }
  const pad = (n: number) => n.toString().padStart(3, '0');
  if (age.years >= 2) {
    return `${pad(age.years)}Y`;
  }
  const months = age.years * 12 + age.months;
  return months >= 1 ? `${pad(months)}M` : `${pad(age.days)}D`;
}
