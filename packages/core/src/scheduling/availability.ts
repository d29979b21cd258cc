// The working hours of a Schedule, kept on it as a Hearth extension (docs/scheduling.md). Its
// shape follows R5's Availability datatype (hl7.org/fhir/R5/metadatatypes.html#Availability),
// which R4 lacks: availableTime (days of week, start and end time) and notAvailableTime
// (a description and a period), plus the time zone the times are in and the slot length.
import { fail, unprocessable } from '../outcome.js';
import { isTimeZone, zonedToEpoch } from './zoned-time.js';

export const AVAILABILITY_URL = 'https://hearth.dev/fhir/StructureDefinition/availability';

export const DAYS_OF_WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type DayOfWeek = (typeof DAYS_OF_WEEK)[number];

export interface AvailableTime {
  daysOfWeek: DayOfWeek[];
  /** Minutes after local midnight. */
  startMinute: number;
  endMinute: number;
}

export interface NotAvailableTime {
  description?: string;
  /** A Period as given: dates (whole local days) or dateTimes. */
  start?: string;
  end?: string;
}

export interface Availability {
  timeZone: string;
  slotMinutes: number;
  availableTime: AvailableTime[];
  notAvailableTime: NotAvailableTime[];
}

interface Extension {
  url?: string;
  extension?: Extension[];
  [value: string]: unknown;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** An exception as [start, end) in epoch ms: a date is its whole local day (an end date included). */
export function exceptionRange(n: NotAvailableTime, timeZone: string): [number, number] {
  const bound = (value: string | undefined, isEnd: boolean): number => {
    if (!value) return isEnd ? Infinity : -Infinity;
    const d = DATE_ONLY.exec(value);
    if (!d) return Date.parse(value);
    const midnight = { year: Number(d[1]), month: Number(d[2]), day: Number(d[3]), hour: 0, minute: 0, second: 0 };
    if (!isEnd) return zonedToEpoch(midnight, timeZone);
    const next = new Date(Date.UTC(midnight.year, midnight.month - 1, midnight.day + 1));
    return zonedToEpoch(
      { ...midnight, year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() },
      timeZone,
    );
  };
  return [bound(n.start, false), bound(n.end, true)];
}

const TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;
const DATE_OR_DATETIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

function minutesOf(value: unknown, where: string): number {
  const m = typeof value === 'string' ? TIME.exec(value) : null;
  if (!m) fail(unprocessable(`${where} must be a time such as 09:00:00`, where));
  return Number(m[1]) * 60 + Number(m[2]);
}

function availableTimeOf(ext: Extension, where: string): AvailableTime {
  const days: DayOfWeek[] = [];
  let start: number | undefined;
  let end: number | undefined;
  for (const [i, part] of (ext.extension ?? []).entries()) {
    const at = `${where}.extension[${i}]`;
    if (part.url === 'daysOfWeek') {
      const day = part.valueCode;
      if (!DAYS_OF_WEEK.includes(day as DayOfWeek)) {
        fail(unprocessable(`${at}.valueCode must be one of ${DAYS_OF_WEEK.join(', ')}`, `${at}.valueCode`));
      }
      days.push(day as DayOfWeek);
    } else if (part.url === 'availableStartTime') {
      start = minutesOf(part.valueTime, `${at}.valueTime`);
    } else if (part.url === 'availableEndTime') {
      end = minutesOf(part.valueTime, `${at}.valueTime`);
    } else {
      fail(unprocessable(`${at}: availableTime takes daysOfWeek, availableStartTime and availableEndTime`, at));
    }
  }
  if (days.length === 0) fail(unprocessable(`${where} needs at least one daysOfWeek`, where));
  if (start === undefined || end === undefined) {
    fail(unprocessable(`${where} needs availableStartTime and availableEndTime`, where));
  }
  if (end <= start) fail(unprocessable(`${where}: availableEndTime must be after availableStartTime`, where));
  return { daysOfWeek: [...new Set(days)], startMinute: start, endMinute: end };
}

function notAvailableTimeOf(ext: Extension, where: string): NotAvailableTime {
  const out: NotAvailableTime = {};
  let period = false;
  for (const [i, part] of (ext.extension ?? []).entries()) {
    const at = `${where}.extension[${i}]`;
    if (part.url === 'description' && typeof part.valueString === 'string') {
      out.description = part.valueString;
    } else if (part.url === 'during' && part.valuePeriod && typeof part.valuePeriod === 'object') {
      const p = part.valuePeriod as { start?: unknown; end?: unknown };
      for (const key of ['start', 'end'] as const) {
        const v = p[key];
        if (v === undefined) continue;
        if (typeof v !== 'string' || !DATE_OR_DATETIME.test(v) || Number.isNaN(Date.parse(v))) {
          fail(
            unprocessable(
              `${at}.valuePeriod.${key} must be a date or a dateTime with a time zone`,
              `${at}.valuePeriod.${key}`,
            ),
          );
        }
        out[key] = v;
      }
      if (!out.start && !out.end) fail(unprocessable(`${at}.valuePeriod needs a start or an end`, `${at}.valuePeriod`));
      period = true;
    } else {
      fail(unprocessable(`${at}: notAvailableTime takes description (valueString) and during (valuePeriod)`, at));
    }
  }
  if (!period) fail(unprocessable(`${where} needs a during period`, where));
  return out;
}

/**
 * The availability on a Schedule, checked; undefined when it has none. Every problem is a 422
 * naming the element, so a client sees what to fix.
 */
export function availabilityOf(schedule: { extension?: Extension[] }): Availability | undefined {
  const index = (schedule.extension ?? []).findIndex((e) => e.url === AVAILABILITY_URL);
  if (index < 0) return undefined;
  const where = `Schedule.extension[${index}]`;
  const ext = (schedule.extension ?? [])[index];
  let timeZone: string | undefined;
  let slotMinutes: number | undefined;
  const availableTime: AvailableTime[] = [];
  const notAvailableTime: NotAvailableTime[] = [];
  /** Where each exception was, to name it once the zone its dates are in is known. */
  const exceptionAt: string[] = [];
  for (const [i, part] of (ext.extension ?? []).entries()) {
    const at = `${where}.extension[${i}]`;
    switch (part.url) {
      case 'timeZone':
        if (typeof part.valueCode !== 'string' || !isTimeZone(part.valueCode)) {
          fail(unprocessable(`${at}.valueCode must be an IANA time zone such as Europe/Paris`, `${at}.valueCode`));
        }
        timeZone = part.valueCode;
        break;
      case 'slotMinutes': {
        const n = part.valuePositiveInt;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 5 || n > 720) {
          fail(unprocessable(`${at}.valuePositiveInt must be a whole number of minutes from 5 to 720`, at));
        }
        slotMinutes = n;
        break;
      }
      case 'availableTime':
        availableTime.push(availableTimeOf(part, at));
        break;
      case 'notAvailableTime':
        notAvailableTime.push(notAvailableTimeOf(part, at));
        exceptionAt.push(at);
        break;
      default:
        fail(
          unprocessable(
            `${at}: the availability extension takes timeZone, slotMinutes, availableTime and notAvailableTime`,
            at,
          ),
        );
    }
  }
  if (!timeZone) fail(unprocessable(`${where} needs a timeZone`, where));
  if (!slotMinutes) fail(unprocessable(`${where} needs slotMinutes`, where));
  if (availableTime.length === 0) fail(unprocessable(`${where} needs at least one availableTime`, where));
  for (const [i, n] of notAvailableTime.entries()) {
    const [start, end] = exceptionRange(n, timeZone);
    if (end <= start) fail(unprocessable(`${exceptionAt[i]}: during ends before it starts`, exceptionAt[i]));
  }
  return { timeZone, slotMinutes, availableTime, notAvailableTime };
}

/** The availability as the extension to store on a Schedule (the inverse of availabilityOf). */
export function availabilityExtension(a: Availability): Extension {
  const time = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00`;
  return {
    url: AVAILABILITY_URL,
    extension: [
      { url: 'timeZone', valueCode: a.timeZone },
      { url: 'slotMinutes', valuePositiveInt: a.slotMinutes },
      ...a.availableTime.map((t) => ({
        url: 'availableTime',
        extension: [
          ...t.daysOfWeek.map((d) => ({ url: 'daysOfWeek', valueCode: d })),
          { url: 'availableStartTime', valueTime: time(t.startMinute) },
          { url: 'availableEndTime', valueTime: time(t.endMinute) },
        ],
      })),
      ...a.notAvailableTime.map((n) => ({
        url: 'notAvailableTime',
        extension: [
          ...(n.description ? [{ url: 'description', valueString: n.description }] : []),
          {
            url: 'during',
            valuePeriod: { ...(n.start ? { start: n.start } : {}), ...(n.end ? { end: n.end } : {}) },
          },
        ],
      })),
    ],
  };
}
