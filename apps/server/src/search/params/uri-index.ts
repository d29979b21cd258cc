import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';

/** URI values, compared exactly (hl7.org/fhir/R4/search.html#uri); a canonical's |version is kept apart. */
export function indexUri(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
  for (const { value } of values) {
    const text = typeof value === 'string' ? value : (value as { reference?: unknown } | null)?.reference;
    if (typeof text !== 'string' || !text) continue;
    const v = text.slice(0, 2048);
    rows.uri.push({ code, grp, values: [v], sortLow: v, sortHigh: v });
  }
}
