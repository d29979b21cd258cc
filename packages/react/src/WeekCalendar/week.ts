// The week a calendar shows, in the viewer's time zone: its days, the hours its events need, and
// where each event sits in its day's column.
import type { Appointment, Slot } from '@hearth/core';

export type CalendarEvent =
  | { kind: 'slot'; id: string; start: Date; end: Date; status: Slot['status']; slot: Slot }
  | {
      kind: 'appointment';
      id: string;
      start: Date;
      end: Date;
      status: Appointment['status'];
      appointment: Appointment;
    };

/** Local midnight of the Monday of `date`'s week. */
export function startOfWeek(date: Date): Date {
  const d = new Date(date.getFullYear(), date.getMonth(), date.getDate());
  const sinceMonday = (d.getDay() + 6) % 7;
  return addDays(d, -sinceMonday);
}

/** `n` calendar days later, at the same local time (daylight-saving changes included). */
export function addDays(date: Date, n: number): Date {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + n, date.getHours(), date.getMinutes());
}

/** The seven days of the week starting at `weekStart`. */
export function weekDays(weekStart: Date): Date[] {
  return Array.from({ length: 7 }, (_, i) => addDays(weekStart, i));
}

/** 'Mar 2 – Mar 8, 2026' */
export function weekLabel(weekStart: Date, locale?: string): string {
  const end = addDays(weekStart, 6);
  const short: Intl.DateTimeFormatOptions = { month: 'short', day: 'numeric' };
  return `${weekStart.toLocaleDateString(locale, short)} – ${end.toLocaleDateString(locale, { ...short, year: 'numeric' })}`;
}

/** '9:00 AM' */
export function timeLabel(date: Date, locale?: string): string {
  return date.toLocaleTimeString(locale, { hour: 'numeric', minute: '2-digit' });
}

/** 'Monday, March 2' */
export function dayLabel(date: Date, locale?: string): string {
  return date.toLocaleDateString(locale, { weekday: 'long', month: 'long', day: 'numeric' });
}

/** 'Monday, March 2, 9:00 AM' */
export function slotLabel(date: Date, locale?: string): string {
  return `${dayLabel(date, locale)}, ${timeLabel(date, locale)}`;
}

/** The hours to draw: 8 to 18, widened to every event's local hours. */
export function hourRange(events: CalendarEvent[], fallback: [number, number] = [8, 18]): [number, number] {
  let [first, last] = fallback;
  for (const e of events) {
    first = Math.min(first, e.start.getHours());
    const endHour = e.end.getHours() + (e.end.getMinutes() > 0 ? 1 : 0);
    // An event ending at midnight the next day ends at 24.
    last = Math.max(last, e.end.getDate() !== e.start.getDate() ? 24 : endHour);
  }
  return [first, last];
}

export interface PlacedEvent {
  event: CalendarEvent;
  /** 0-6: Monday to Sunday. */
  day: number;
  /** Offset and length in the day's drawn hours, as percentages. */
  top: number;
  height: number;
}

/** Each event of the week in its day column; events of other weeks are left out. */
export function placeEvents(events: CalendarEvent[], weekStart: Date, hours: [number, number]): PlacedEvent[] {
  const days = weekDays(weekStart);
  const span = (hours[1] - hours[0]) * 60;
  const out: PlacedEvent[] = [];
  for (const event of events) {
    const day = days.findIndex(
      (d) =>
        d.getFullYear() === event.start.getFullYear() &&
        d.getMonth() === event.start.getMonth() &&
        d.getDate() === event.start.getDate(),
    );
    if (day < 0) continue;
    const startMinute = event.start.getHours() * 60 + event.start.getMinutes() - hours[0] * 60;
    const minutes = Math.max(5, (event.end.getTime() - event.start.getTime()) / 60_000);
    out.push({
      event,
      day,
      top: (startMinute / span) * 100,
      height: (Math.min(minutes, span - startMinute) / span) * 100,
    });
  }
  return out;
}

/**
 * What the calendar draws: the appointments that hold time, and the slots no appointment covers
 * (a booked slot is drawn as its appointment). Cancelled appointments are left out: their slot is free again.
 */
export function calendarEvents(slots: Slot[], appointments: Appointment[]): CalendarEvent[] {
  const shown = appointments.filter((a) => a.status !== 'cancelled' && a.status !== 'entered-in-error' && a.start);
  const held = new Set(shown.flatMap((a) => (a.slot ?? []).map((s) => s.reference)));
  const events: CalendarEvent[] = shown.map((a) => ({
    kind: 'appointment',
    id: a.id as string,
    start: new Date(a.start as string),
    end: new Date(a.end ?? (a.start as string)),
    status: a.status,
    appointment: a,
  }));
  for (const s of slots) {
    if (held.has(`Slot/${s.id}`) || s.status === 'entered-in-error') continue;
    events.push({
      kind: 'slot',
      id: s.id as string,
      start: new Date(s.start),
      end: new Date(s.end),
      status: s.status,
      slot: s,
    });
  }
  return events.sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** Mantine colours by status: free green, booked blue, unavailable grey... */
export const STATUS_COLORS: Record<string, string> = {
  free: 'green',
  busy: 'gray',
  'busy-unavailable': 'gray',
  'busy-tentative': 'yellow',
  proposed: 'yellow',
  pending: 'yellow',
  booked: 'blue',
  arrived: 'teal',
  'checked-in': 'teal',
  fulfilled: 'violet',
  noshow: 'red',
  waitlist: 'orange',
};

/** What a status reads as on the calendar. */
export const STATUS_LABELS: Record<string, string> = {
  free: 'Free',
  busy: 'Busy',
  'busy-unavailable': 'Unavailable',
  'busy-tentative': 'Tentative',
  proposed: 'Proposed',
  pending: 'Pending',
  booked: 'Booked',
  arrived: 'Arrived',
  'checked-in': 'Checked in',
  fulfilled: 'Fulfilled',
  noshow: 'No-show',
  waitlist: 'Waitlist',
};

/** The patient an appointment is for, as its participant reads. */
export function appointmentPatient(a: Appointment): string {
  const p = a.participant?.find((x) => x.actor?.reference?.startsWith('Patient/'));
  return p?.actor?.display ?? p?.actor?.reference ?? 'Appointment';
}
