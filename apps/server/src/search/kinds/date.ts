import { badRequest, fail, Operator } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import { invalidValue, unescapeValue, type QueryContext, type ValueItem } from '../query/context.js';
import { clampMs, parseDateRange, toTimestamp, type DateRange } from '../values/dates.js';
import { anyOf, type MatchInput, type RowMatch, type SearchParamKind } from './kind.js';

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
function indexDate(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
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

/**
 * The date comparisons of hl7.org/fhir/R4/search.html#prefix over half-open ranges: the search
 * value covers [sl, sh), a target row [low, high). `ge`/`le` are written with a leading
 * condition on one column so that an index range scan serves them.
 */
export function rangePredicate(
  ctx: QueryContext,
  low: string,
  high: string,
  prefix: Operator,
  sl: number,
  sh: number,
): string {
  const L = () => ctx.bind(toTimestamp(clampMs(sl)), 'timestamptz');
  const H = () => ctx.bind(toTimestamp(clampMs(sh)), 'timestamptz');
  switch (prefix) {
    case Operator.EQUALS:
      return `${low} >= ${L()} AND ${high} <= ${H()}`;
    case Operator.NOT_EQUALS:
      return `NOT (${low} >= ${L()} AND ${high} <= ${H()})`;
    case Operator.GREATER_THAN:
      return `${high} > ${H()}`;
    case Operator.LESS_THAN:
      return `${low} < ${L()}`;
    case Operator.GREATER_THAN_OR_EQUALS:
      return `${high} > ${L()} AND (${high} > ${H()} OR ${low} >= ${L()})`;
    case Operator.LESS_THAN_OR_EQUALS:
      return `${low} < ${H()} AND (${low} < ${L()} OR ${high} <= ${H()})`;
    case Operator.STARTS_AFTER:
      return `${low} >= ${H()}`;
    case Operator.ENDS_BEFORE:
      return `${high} <= ${L()}`;
    case Operator.APPROXIMATELY: {
      // "Approximately": within 10% of the distance between now and the value, at least a day.
      const gap = Math.max(86_400_000, Math.abs(Date.now() - sl) * 0.1);
      return `${low} < ${ctx.bind(toTimestamp(clampMs(sh + gap)), 'timestamptz')} AND ${high} > ${ctx.bind(toTimestamp(clampMs(sl - gap)), 'timestamptz')}`;
    }
    default:
      fail(badRequest(`Prefix ${prefix} is not supported`));
  }
}

export function parseDateItem(item: ValueItem, code: string): { low: number; high: number } {
  const range = parseDateRange(unescapeValue(item.text));
  if (!range) {
    fail(badRequest(`Invalid date "${unescapeValue(item.text)}" for search parameter ${code}`, code));
  }
  return range;
}

/** Date search: prefixes over the implicit ranges of partial dates, Periods, Timings and instants. */
function matchDate(ctx: QueryContext, { x, items, filter, param, modifier }: MatchInput): RowMatch {
  if (modifier) {
    invalidValue(filter, `modifier :${modifier} does not apply to dates`);
  }
  const preds = items.map((item) => {
    const r = parseDateItem(item, filter.code);
    return rangePredicate(ctx, `${x}.low`, `${x}.high`, item.prefix, r.low, r.high);
  });
  return { kind: 'date', code: param.code, predicate: anyOf(preds) };
}

export const dateKind: SearchParamKind = {
  type: 'date',
  prefixed: true,
  table: 'date',
  index: (values, { code, grp }, rows) => indexDate(values, code, grp, rows),
  match: matchDate,
  // By the start in both directions (see push).
  sort: { asc: (x) => `${x}.low`, desc: (x) => `${x}.low`, type: 'timestamptz' },
};
