import { badRequest, fail, Operator, splitSearchValue, type Filter } from '@hearth/core';
import { unescapeValue, type QueryContext, type ValueItem } from '../query/context.js';
import { formatDecimal, parseDecimal, precisionRange, shiftDecimal, type Decimal } from '../values/decimals.js';
import { normalizeUcum, UCUM_SYSTEM } from '../values/ucum.js';
import { anyOf, type KindQuery } from './match.js';

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
): string {
  const { low: sl, high: sh } = precisionRange(value);
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

export const numberQuery: KindQuery = (ctx, x, items, filter, param, modifier) => {
  if (modifier) {
    fail(badRequest(`Modifier :${modifier} does not apply to number parameter ${filter.code}`, filter.code));
  }
  const preds = items.map((item) =>
    numberPredicate(ctx, `${x}.low`, `${x}.high`, item.prefix, parseNumberItem(item, filter)),
  );
  return { kind: 'number', code: param.code, predicate: anyOf(preds) };
};

/**
 * Quantity search (hl7.org/fhir/R4/search.html#quantity): `[prefix]number|system|code`. With a
 * UCUM unit both sides are compared in the unit without prefixes (5.4|..|mg matches 0.0054 g);
 * with another unit, by system and code as written; without a unit, the number alone.
 */
export const quantityQuery: KindQuery = (ctx, x, items, filter, param, modifier) => {
  if (modifier) {
    fail(badRequest(`Modifier :${modifier} does not apply to quantity parameter ${filter.code}`, filter.code));
  }
  const preds = items.map((item) => {
    const [numberText, system, code] = splitSearchValue(item.text, '|');
    const value = parseNumberItem(item, filter, numberText);
    if (!code && !system) {
      return numberPredicate(ctx, `${x}.low`, `${x}.high`, item.prefix, value);
    }
    const conds: string[] = [];
    if (code) {
      // Scaling moves the decimal point only, so the value keeps the precision it was written with.
      const ucum = !system || system === UCUM_SYSTEM ? normalizeUcum(code) : undefined;
      conds.push(`${x}.nunit = ${ctx.bind(ucum ? ucum.unit : code)}`);
      const scaled = ucum ? shiftDecimal(value, ucum.power) : value;
      conds.push(numberPredicate(ctx, `${x}.nlow`, `${x}.nhigh`, item.prefix, scaled));
    } else {
      conds.push(numberPredicate(ctx, `${x}.low`, `${x}.high`, item.prefix, value));
    }
    if (system && !code) conds.push(`${x}.system = ${ctx.bind(system)}`);
    return conds.join(' AND ');
  });
  return { kind: 'quantity', code: param.code, predicate: anyOf(preds) };
};
