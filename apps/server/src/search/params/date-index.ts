import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import { clampMs, parseDateRange, toTimestamp, type DateRange } from '../values/dates.js';

function push(rows: RowSet, code: string, grp: number, range: DateRange): void {
  const low = clampMs(range.low);
  const high = clampMs(range.high);
  // Sorted by the start in both directions: "latest first" means the latest start, even when a
  // Period is still open (its end is unbounded).
  rows.date.push({ code, grp, values: [toTimestamp(low), toTimestamp(high)], sortLow: low, sortHigh: low });
}

/** A Period: from the start of `start` to the end of `end`; an open end is unbounded. */
function periodRange(p: { start?: unknown; end?: unknown }): DateRange | undefined {
  const start = typeof p.start === 'string' ? parseDateRange(p.start) : undefined;
  const end = typeof p.end === 'string' ? parseDateRange(p.end) : undefined;
  if (!start && !end) return undefined;
  return { low: start ? start.low : -Infinity, high: end ? end.high : Infinity };
}

/**
 * Date values as ranges (hl7.org/fhir/R4/search.html#date): date, dateTime and instant by their
 * precision, Period by its bounds, Timing by each event and its repeat bounds.
 */
export function indexDate(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
  for (const { value } of values) {
    if (typeof value === 'string') {
      const r = parseDateRange(value);
      if (r) push(rows, code, grp, r);
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    const v = value as Record<string, unknown>;
    if ('start' in v || 'end' in v) {
      const r = periodRange(v);
      if (r) push(rows, code, grp, r);
      continue;
    }
    if ('event' in v || 'repeat' in v) {
      for (const e of (v.event as unknown[] | undefined) ?? []) {
        const r = typeof e === 'string' ? parseDateRange(e) : undefined;
        if (r) push(rows, code, grp, r);
      }
      const bounds = (v.repeat as { boundsPeriod?: { start?: unknown; end?: unknown } } | undefined)?.boundsPeriod;
      const r = bounds ? periodRange(bounds) : undefined;
      if (r) push(rows, code, grp, r);
    }
  }
}
