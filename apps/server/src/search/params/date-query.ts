import { badRequest, fail, Operator } from '@hearth/core';
import { invalidValue, unescapeValue, type QueryContext, type ValueItem } from '../query/context.js';
import { clampMs, parseDateRange, toTimestamp } from '../values/dates.js';
import { anyOf, type KindQuery } from './match.js';

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
export const dateQuery: KindQuery = (ctx, x, items, filter, param, modifier) => {
  if (modifier) {
    invalidValue(filter, `modifier :${modifier} does not apply to dates`);
  }
  const preds = items.map((item) => {
    const r = parseDateItem(item, filter.code);
    return rangePredicate(ctx, `${x}.low`, `${x}.high`, item.prefix, r.low, r.high);
  });
  return { kind: 'date', code: param.code, predicate: anyOf(preds) };
};
