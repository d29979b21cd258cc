// The availability form's fields as text, and the Availability (@hearth/core) they stand for, both
// ways: a Schedule's availability extension becomes a draft to edit, a draft becomes the extension.
import {
  availabilityOf,
  exceptionRange,
  localParts,
  zonedToEpoch,
  type Availability,
  type DayOfWeek,
  type NotAvailableTime,
  type Schedule,
} from '@hearth/core';

/** One row of working hours: days, and from-to in local time ('HH:MM'). */
export interface HoursDraft {
  days: string[];
  from: string;
  to: string;
}

/**
 * One exception (time off), each end a day alone (a whole local day, the last one included) or a
 * day and a time (that moment in the schedule's zone). A blank end is open: "until further notice".
 */
export interface TimeOffDraft {
  description: string;
  /** YYYY-MM-DD, or '' for an open start. */
  startDate: string;
  /** YYYY-MM-DD, or '' for an open end (until further notice). */
  endDate: string;
  /** 'HH:MM', or '' for whole days. */
  startTime: string;
  endTime: string;
}

export interface AvailabilityDraft {
  hours: HoursDraft[];
  timeOff: TimeOffDraft[];
  slotMinutes: number | string;
  timeZone: string;
}

export const NEW_HOURS: HoursDraft = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' };
export const NEW_TIME_OFF: TimeOffDraft = { description: '', startDate: '', endDate: '', startTime: '', endTime: '' };

const pad = (n: number) => String(n).padStart(2, '0');
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** 'HH:MM' as minutes after midnight, or undefined. */
export function minutesOfTime(value: string): number | undefined {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value);
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

const timeOfMinutes = (m: number) => `${pad(Math.floor(m / 60))}:${pad(m % 60)}`;

/** The instant a local date and time name in the zone, as an ISO dateTime in UTC. */
function zonedInstant(date: string, time: string, timeZone: string): string {
  const [year, month, day] = date.split('-').map(Number);
  const minutes = minutesOfTime(time) as number;
  const epoch = zonedToEpoch(
    { year, month, day, hour: Math.floor(minutes / 60), minute: minutes % 60, second: 0 },
    timeZone,
  );
  return new Date(epoch).toISOString();
}

/** A stored exception's bound as the form's local date and time ('' time for a date). */
function localBound(value: string | undefined, timeZone: string): { date: string; time: string } {
  if (!value) return { date: '', time: '' };
  if (DATE.test(value)) return { date: value, time: '' };
  const p = localParts(Date.parse(value), timeZone);
  return { date: `${p.year}-${pad(p.month)}-${pad(p.day)}`, time: `${pad(p.hour)}:${pad(p.minute)}` };
}

/** An exception as form fields. */
export function timeOffDraft(n: NotAvailableTime, timeZone: string): TimeOffDraft {
  const start = localBound(n.start, timeZone);
  const end = localBound(n.end, timeZone);
  return {
    description: n.description ?? '',
    startDate: start.date,
    startTime: start.time,
    endDate: end.date,
    endTime: end.time,
  };
}

/** The form's fields for a Schedule: its availability, or a new one's defaults. Throws on a malformed extension. */
export function scheduleDraft(schedule: Schedule | undefined, defaultZone: string): AvailabilityDraft {
  const a = schedule ? availabilityOf(schedule as Parameters<typeof availabilityOf>[0]) : undefined;
  if (!a) return { hours: [NEW_HOURS], timeOff: [], slotMinutes: 30, timeZone: defaultZone };
  return {
    hours: a.availableTime.map((t) => ({
      days: [...t.daysOfWeek],
      from: timeOfMinutes(t.startMinute),
      to: timeOfMinutes(t.endMinute),
    })),
    timeOff: a.notAvailableTime.map((n) => timeOffDraft(n, a.timeZone)),
    slotMinutes: a.slotMinutes,
    timeZone: a.timeZone,
  };
}

/** One end of an exception: a date (a whole day), a date and a time (an instant in the zone), or open. */
function boundOf(date: string, time: string, where: string, timeZone: string): string | undefined | Error {
  if (!date) return time ? new Error(`${where}: a time needs its day`) : undefined;
  if (!DATE.test(date)) return new Error(`${where}: ${date} is not a date`);
  if (!time) return date;
  if (minutesOfTime(time) === undefined) return new Error(`${where}: ${time} is not a time`);
  return zonedInstant(date, time, timeZone);
}

/** One exception from its fields, or what is wrong with them. */
function exceptionOf(t: TimeOffDraft, where: string, timeZone: string): NotAvailableTime | string {
  const start = boundOf(t.startDate, t.startTime, where, timeZone);
  const end = boundOf(t.endDate, t.endTime, where, timeZone);
  if (start instanceof Error) return start.message;
  if (end instanceof Error) return end.message;
  if (!start && !end) return `${where}: give its first day, its last day or both`;
  const exception: NotAvailableTime = {
    ...(t.description.trim() ? { description: t.description.trim() } : {}),
    ...(start ? { start } : {}),
    ...(end ? { end } : {}),
  };
  // Checked as the server reads it: a date is its whole local day, the last one included.
  const [from, to] = exceptionRange(exception, timeZone);
  if (to <= from) return `${where} ends before it starts`;
  return exception;
}

/** The availability of a draft, or the first thing wrong with it (for the form to show). */
export function draftAvailability(d: AvailabilityDraft): Availability | string {
  const minutes = Number(d.slotMinutes);
  if (!Number.isInteger(minutes) || minutes < 5 || minutes > 720) return 'Slot length must be 5 to 720 minutes';
  if (d.hours.length === 0) return 'Give at least one set of working hours';
  const availableTime: Availability['availableTime'] = [];
  for (const [i, h] of d.hours.entries()) {
    const label = d.hours.length > 1 ? `Working hours ${i + 1}: ` : '';
    const start = minutesOfTime(h.from);
    const end = minutesOfTime(h.to);
    if (h.days.length === 0) return `${label}Choose at least one working day`;
    if (start === undefined || end === undefined) return `${label}Give the start and end of working hours`;
    if (end <= start) return `${label}Working hours must end after they start`;
    if (end - start < minutes) return `${label}Working hours are shorter than one slot`;
    availableTime.push({ daysOfWeek: h.days as DayOfWeek[], startMinute: start, endMinute: end });
  }
  const notAvailableTime: NotAvailableTime[] = [];
  for (const [i, t] of d.timeOff.entries()) {
    const exception = exceptionOf(t, `Time off ${i + 1}`, d.timeZone);
    if (typeof exception === 'string') return exception;
    notAvailableTime.push(exception);
  }
  return { timeZone: d.timeZone, slotMinutes: minutes, availableTime, notAvailableTime };
}
