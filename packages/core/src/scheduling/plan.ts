// The Slots an availability gives over a window of time: every slot-long step of each day's
// working hours (in the schedule's zone), busy-unavailable where an exception covers it.
import { exceptionRange, type Availability, type DayOfWeek } from './availability.js';
import { localParts, zonedToEpoch } from './zoned-time.js';

export interface PlannedSlot {
  /** Epoch ms. */
  start: number;
  end: number;
  status: 'free' | 'busy-unavailable';
  /** The exception's description, for busy-unavailable slots. */
  comment?: string;
}

const DAY_OF_WEEK: DayOfWeek[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const DAY_MS = 86_400_000;
/**
 * The slots starting in [from, to) (epoch ms), in start order. Working hours are walked day by
 * day in the schedule's zone, so a slot at 09:00 stays at 09:00 local across daylight-saving changes.
 * A slot that would run past the end of its hours is left out.
 */
export function planSlots(a: Availability, from: number, to: number): PlannedSlot[] {
  const exceptions = a.notAvailableTime.map((n) => ({ range: exceptionRange(n, a.timeZone), comment: n.description }));
  const out: PlannedSlot[] = [];
  const first = localParts(from, a.timeZone);
  // Calendar days are counted in UTC date arithmetic on the local date, which has no DST.
  let day = Date.UTC(first.year, first.month - 1, first.day);
  // Start one local day early: a window starting mid-day still catches that day's later slots.
  day -= DAY_MS;
  const stepMs = a.slotMinutes * 60_000;
  for (; ; day += DAY_MS) {
    const date = new Date(day);
    const local = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
    const midnight = zonedToEpoch({ ...local, hour: 0, minute: 0, second: 0 }, a.timeZone);
    if (midnight >= to) break;
    const weekday = DAY_OF_WEEK[date.getUTCDay()];
    for (const hours of a.availableTime) {
      if (!hours.daysOfWeek.includes(weekday)) continue;
      for (let m = hours.startMinute; m + a.slotMinutes <= hours.endMinute; m += a.slotMinutes) {
        const start = zonedToEpoch({ ...local, hour: Math.floor(m / 60), minute: m % 60, second: 0 }, a.timeZone);
        const end = start + stepMs;
        if (start < from || start >= to) continue;
        const blocked = exceptions.find(({ range }) => start < range[1] && end > range[0]);
        out.push(
          blocked
            ? { start, end, status: 'busy-unavailable', ...(blocked.comment ? { comment: blocked.comment } : {}) }
            : { start, end, status: 'free' },
        );
      }
    }
  }
  out.sort((x, y) => x.start - y.start || x.end - y.end);
  // Overlapping hours (two availableTimes covering the same minutes) give one slot per start.
  return out.filter((s, i) => i === 0 || s.start !== out[i - 1].start);
}
