import { badRequest, fail, Operator, type Filter } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import { unescapeValue, type QueryContext, type ValueItem } from '../query/context.js';
import { decimalText, formatDecimal, parseDecimal, precisionRange, type Decimal } from '../values/decimals.js';
import { anyOf, type MatchInput, type RowMatch, type SearchParamKind } from './kind.js';

/** A number row: a target range [low, high] (low = high for a plain number). */
export function pushNumber(rows: RowSet, code: string, grp: number, low: string, high: string): void {
  rows.number.push({ code, grp, values: [low, high], sortLow: Number(low), sortHigh: Number(high) });
}

/** Number values (hl7.org/fhir/R4/search.html#number): decimals and integers, and Ranges by their bounds. */
function indexNumber(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
  for (const { value } of values) {
    const d = decimalText(value);
    if (d !== undefined) {
      pushNumber(rows, code, grp, d, d);
      continue;
    }
    if (value && typeof value === 'object') {
      const v = value as { low?: { value?: unknown }; high?: { value?: unknown }; value?: unknown };
      if ('value' in v) {
        const x = decimalText(v.value);
        if (x !== undefined) pushNumber(rows, code, grp, x, x);
      } else if (v.low || v.high) {
        const lo = decimalText(v.low?.value);
        const hi = decimalText(v.high?.value);
        // numeric has no infinity; ±1e300 stands for an open bound.
        pushNumber(rows, code, grp, lo ?? '-1e300', hi ?? '1e300');
      }
    }
  }
}

function num(ctx: QueryContext, d: Decimal): string {
  return ctx.bind(formatDecimal(d), 'numeric');
}

/**
 * Number comparisons (hl7.org/fhir/R4/search.html#number) of a target [low, high] (equal for a
 * plain number) with a search value: `eq` within the value's implicit precision range, the
 * others against the value itself; `ap` within 10%.
 */
export function numberPredicate(
  ctx: QueryContext,
  low: string,
  high: string,
  prefix: Operator,
  value: Decimal,
  /** The value's implicit range when it is not the one its precision gives (a converted unit). */
  range: { low: Decimal; high: Decimal } = precisionRange(value),
): string {
  const { low: sl, high: sh } = range;
  switch (prefix) {
    case Operator.EQUALS:
      return `${low} >= ${num(ctx, sl)} AND ${high} < ${num(ctx, sh)}`;
    case Operator.NOT_EQUALS:
      return `NOT (${low} >= ${num(ctx, sl)} AND ${high} < ${num(ctx, sh)})`;
    case Operator.GREATER_THAN:
      return `${high} > ${num(ctx, value)}`;
    case Operator.LESS_THAN:
      return `${low} < ${num(ctx, value)}`;
    case Operator.GREATER_THAN_OR_EQUALS:
      return `${high} >= ${num(ctx, value)}`;
    case Operator.LESS_THAN_OR_EQUALS:
      return `${low} <= ${num(ctx, value)}`;
    case Operator.STARTS_AFTER:
      return `${low} > ${num(ctx, value)}`;
    case Operator.ENDS_BEFORE:
      return `${high} < ${num(ctx, value)}`;
    case Operator.APPROXIMATELY: {
      const v = num(ctx, value);
      return `${low} <= ${v} + abs(${v}) * 0.1 AND ${high} >= ${v} - abs(${v}) * 0.1`;
    }
    default:
      fail(badRequest(`Prefix ${prefix} is not supported`));
  }
}

export function parseNumberItem(item: ValueItem, filter: Filter, text = item.text): Decimal {
  const d = parseDecimal(unescapeValue(text));
  if (!d) {
    fail(badRequest(`Invalid number "${unescapeValue(text)}" for search parameter ${filter.code}`, filter.code));
  }
  return d;
}

function matchNumber(ctx: QueryContext, { x, items, filter, param, modifier }: MatchInput): RowMatch {
  if (modifier) {
    fail(badRequest(`Modifier :${modifier} does not apply to number parameter ${filter.code}`, filter.code));
  }
  const preds = items.map((item) =>
    numberPredicate(ctx, `${x}.low`, `${x}.high`, item.prefix, parseNumberItem(item, filter)),
  );
  return { kind: 'number', code: param.code, predicate: anyOf(preds) };
}

export const numberKind: SearchParamKind = {
  type: 'number',
  prefixed: true,
  table: 'number',
  index: (values, { code, grp }, rows) => indexNumber(values, code, grp, rows),
  match: matchNumber,
  sort: { asc: (x) => `${x}.low`, desc: (x) => `${x}.high`, type: 'numeric' },
};
