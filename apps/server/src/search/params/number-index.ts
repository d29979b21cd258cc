import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import { decimalText } from '../values/decimals.js';

function push(rows: RowSet, code: string, grp: number, low: string, high: string): void {
  rows.number.push({ code, grp, values: [low, high], sortLow: Number(low), sortHigh: Number(high) });
}

/** Number values (hl7.org/fhir/R4/search.html#number): decimals and integers, and Ranges by their bounds. */
export function indexNumber(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
  for (const { value } of values) {
    const d = decimalText(value);
    if (d !== undefined) {
      push(rows, code, grp, d, d);
      continue;
    }
    if (value && typeof value === 'object') {
      const v = value as { low?: { value?: unknown }; high?: { value?: unknown }; value?: unknown };
      if ('value' in v) {
        const x = decimalText(v.value);
        if (x !== undefined) push(rows, code, grp, x, x);
      } else if (v.low || v.high) {
        const lo = decimalText(v.low?.value);
        const hi = decimalText(v.high?.value);
        // numeric has no infinity; ±1e300 stands for an open bound.
        push(rows, code, grp, lo ?? '-1e300', hi ?? '1e300');
      }
    }
  }
}

/** A Location's position as two number rows (`near#0` latitude, `near#1` longitude) of one group. */
export function indexNear(values: TypedValue[], code: string, rows: RowSet): void {
  let grp = 0;
  for (const { value } of values) {
    const v = value as { latitude?: unknown; longitude?: unknown } | null;
    const lat = decimalText(v?.latitude);
    const lon = decimalText(v?.longitude);
    if (lat === undefined || lon === undefined) continue;
    grp++;
    push(rows, `${code}#0`, grp, lat, lat);
    push(rows, `${code}#1`, grp, lon, lon);
  }
}
