import { badRequest, fail, splitSearchValue } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import type { QueryContext } from '../query/context.js';
import { decimalText, formatDecimal, parseDecimal, precisionRange } from '../values/decimals.js';
import { toBaseUnits, UCUM_SYSTEM } from '../values/ucum.js';
import { anyOf, type MatchInput, type RowMatch, type SearchParamKind } from './kind.js';
import { numberPredicate, parseNumberItem } from './number.js';

interface QuantityLike {
  value?: unknown;
  system?: unknown;
  code?: unknown;
  unit?: unknown;
  currency?: unknown;
}

/** Bounds of an open Range: kept as they are in any unit. */
const OPEN_BOUNDS = new Set(['-1e300', '1e300']);

/** The unit a quantity is compared in: UCUM codes in base units (values/ucum.ts); other units as written. */
function canonicalQuantity(
  value: string,
  system: string | undefined,
  code: string | undefined,
): { unit: string | null; value: string } {
  if (code && (!system || system === UCUM_SYSTEM)) {
    const d = parseDecimal(value);
    const canonical = d ? toBaseUnits(d, code) : undefined;
    if (canonical) {
      return { unit: canonical.unit, value: OPEN_BOUNDS.has(value) ? value : formatDecimal(canonical.value) };
    }
  }
  return { unit: code ?? null, value };
}

function push(rows: RowSet, code: string, grp: number, q: QuantityLike, low: string, high: string): void {
  const system =
    typeof q.system === 'string' ? q.system : typeof q.currency === 'string' ? 'urn:iso:std:iso:4217' : undefined;
  const unitCode =
    typeof q.code === 'string'
      ? q.code
      : typeof q.currency === 'string'
        ? q.currency
        : typeof q.unit === 'string'
          ? q.unit
          : undefined;
  const nlow = canonicalQuantity(low, system, unitCode);
  const nhigh = canonicalQuantity(high, system, unitCode);
  rows.quantity.push({
    code,
    grp,
    values: [system ?? null, unitCode ?? null, low, high, nlow.unit, nlow.value, nhigh.value],
    sortLow: Number(nlow.value),
    sortHigh: Number(nhigh.value),
  });
}

/** Quantity values (hl7.org/fhir/R4/search.html#quantity): Quantity and its kinds, Money, Range; plain numbers. */
function indexQuantity(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
  for (const { value } of values) {
    const plain = decimalText(value);
    if (plain !== undefined) {
      push(rows, code, grp, {}, plain, plain);
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    const v = value as QuantityLike & { low?: QuantityLike; high?: QuantityLike };
    if ('value' in v) {
      const d = decimalText(v.value);
      if (d !== undefined) push(rows, code, grp, v, d, d);
    } else if (v.low || v.high) {
      const unit = v.low ?? v.high ?? {};
      const lo = decimalText(v.low?.value);
      const hi = decimalText(v.high?.value);
      push(rows, code, grp, unit, lo ?? '-1e300', hi ?? '1e300');
    }
  }
}

/**
 * Quantity search (hl7.org/fhir/R4/search.html#quantity): `[prefix]number|system|code`. With a
 * UCUM unit both sides are compared in base units (5.4|..|mg matches 0.0054 g, 2|..|[lb_av]
 * matches 907.18474 g, 1.5|..|h matches 90 min);
 * with another unit, by system and code as written; without a unit, the number alone.
 */
function matchQuantity(ctx: QueryContext, { x, items, filter, param, modifier }: MatchInput): RowMatch {
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
      // In base units; the implicit range of the value's precision is converted with it
      // (5.4 [lb_av] is [5.35, 5.45) [lb_av], then in g).
      const ucum = !system || system === UCUM_SYSTEM ? toBaseUnits(value, code) : undefined;
      conds.push(`${x}.nunit = ${ctx.bind(ucum ? ucum.unit : code)}`);
      if (ucum) {
        const { low, high } = precisionRange(value);
        const range = { low: toBaseUnits(low, code)!.value, high: toBaseUnits(high, code)!.value };
        conds.push(numberPredicate(ctx, `${x}.nlow`, `${x}.nhigh`, item.prefix, ucum.value, range));
      } else {
        conds.push(numberPredicate(ctx, `${x}.nlow`, `${x}.nhigh`, item.prefix, value));
      }
    } else {
      conds.push(numberPredicate(ctx, `${x}.low`, `${x}.high`, item.prefix, value));
    }
    if (system && !code) conds.push(`${x}.system = ${ctx.bind(system)}`);
    return conds.join(' AND ');
  });
  return { kind: 'quantity', code: param.code, predicate: anyOf(preds) };
}

export const quantityKind: SearchParamKind = {
  type: 'quantity',
  prefixed: true,
  table: 'quantity',
  index: (values, { code, grp }, rows) => indexQuantity(values, code, grp, rows),
  match: matchQuantity,
  // In base units, so that 900 mg sorts before 1 g.
  sort: { asc: (x) => `${x}.nlow`, desc: (x) => `${x}.nhigh`, type: 'numeric' },
};
