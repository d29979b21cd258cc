import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import { decimalText, formatDecimal, parseDecimal, shiftDecimal } from '../values/decimals.js';
import { normalizeUcum, UCUM_SYSTEM } from '../values/ucum.js';

interface QuantityLike {
  value?: unknown;
  system?: unknown;
  code?: unknown;
  unit?: unknown;
  currency?: unknown;
}

/** The unit a quantity is compared in: UCUM codes without prefixes; other units as written. */
export function canonicalQuantity(
  value: string,
  system: string | undefined,
  code: string | undefined,
): { unit: string | null; value: string } {
  if (code && (!system || system === UCUM_SYSTEM)) {
    const n = normalizeUcum(code);
    const d = parseDecimal(value);
    if (n && d) {
      return { unit: n.unit, value: formatDecimal(shiftDecimal(d, n.power)) };
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
export function indexQuantity(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
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
