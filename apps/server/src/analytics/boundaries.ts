/**
 * FHIRPath lowBoundary() and highBoundary() (hl7.org/fhirpath/2.0.0/#lowboundaryprecision-integer-decimal--date--datetime--time):
 * the least and greatest values a decimal, date, dateTime or time may stand for at the precision it
 * was written with. A dateTime without an offset could be anywhere: its low boundary takes +14:00, its
 * high boundary -12:00 (the spec's examples).
 */

export type BoundaryKind = 'decimal' | 'integer' | 'date' | 'dateTime' | 'time';

/** Decimal digits after the point in the written text (1.0 -> 1, 1 -> 0, 1.5e2 -> 0). */
function decimalPlaces(text: string): number {
  const [mantissa, exponent] = text.toLowerCase().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent ?? 0));
}

/** A decimal's boundary; `text` is how it was written (precision), `precision` the digits wanted (default 8). */
export function decimalBoundary(value: number, text: string, high: boolean, precision?: number): number | undefined {
  const places = decimalPlaces(text);
  const out = precision ?? 8;
  if (out < 0 || out > 28) return undefined;
  const half = 0.5 * 10 ** -places;
  const bound = high ? value + half : value - half;
  // Round at one digit past the written precision (floating point noise), then to what was asked.
  const rounded = Number(bound.toFixed(Math.min(places + 1, 20)));
  if (out >= places + 1) return rounded;
  const scale = 10 ** out;
  return high ? Math.ceil(rounded * scale) / scale : Math.floor(rounded * scale) / scale;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;
const TIME = /^(\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?$/;

function timeBoundary(time: string, high: boolean): string | undefined {
  const m = TIME.exec(time);
  if (!m) return undefined;
  const [, h, min, s, ms] = m;
  const fill = (v: string | undefined, low: string, hi: string) => v ?? (high ? hi : low);
  const millis = ms ? (ms + (high ? '999' : '000')).slice(0, 3) : high ? '999' : '000';
  return `${h}:${fill(min, '00', '59')}:${fill(s, '00', '59')}.${millis}`;
}

function dateBoundary(date: string, high: boolean): string | undefined {
  const m = DATE.exec(date);
  if (!m) return undefined;
  const [, y, mo, d] = m;
  const month = mo ?? (high ? '12' : '01');
  const day = d ?? (high ? String(daysIn(Number(y), Number(month))).padStart(2, '0') : '01');
  return `${y}-${month}-${day}`;
}

/** Cuts a full boundary to a FHIRPath precision (digits: 4 year, 6 month, 8 day, 10 hour, 12 minute, 14 second, 17 ms). */
function cutDateTime(full: string, precision: number | undefined, kind: 'date' | 'dateTime'): string | undefined {
  if (precision === undefined) return full;
  const lengths: Record<number, number> = { 4: 4, 6: 7, 8: 10, 10: 13, 12: 16, 14: 19, 17: 23 };
  const length = lengths[precision];
  if (length === undefined || (kind === 'date' && precision > 8)) return undefined;
  const zone = kind === 'dateTime' && precision > 8 ? (/([+-]\d{2}:\d{2}|Z)$/.exec(full)?.[1] ?? '') : '';
  return full.slice(0, length) + zone;
}

function cutTime(full: string, precision: number | undefined): string | undefined {
  if (precision === undefined) return full;
  const lengths: Record<number, number> = { 2: 2, 4: 5, 6: 8, 9: 12 };
  return lengths[precision] === undefined ? undefined : full.slice(0, lengths[precision]);
}

/** The boundary of a date, dateTime or time written as `text`; undefined when it is not one or the precision is invalid. */
export function temporalBoundary(
  kind: 'date' | 'dateTime' | 'time',
  text: string,
  high: boolean,
  precision?: number,
): string | undefined {
  if (kind === 'time') {
    const full = timeBoundary(text.replace(/^T/, ''), high);
    return full && cutTime(full, precision);
  }
  const [datePart, rest] = text.split('T');
  const date = dateBoundary(datePart, high);
  if (!date) return undefined;
  if (kind === 'date') return cutDateTime(date, precision, 'date');
  const zoneMatch = rest ? /(Z|[+-]\d{2}:\d{2})$/.exec(rest) : null;
  const zone = zoneMatch ? zoneMatch[1] : high ? '-12:00' : '+14:00';
  const time = timeBoundary(rest ? rest.slice(0, rest.length - (zoneMatch?.[1].length ?? 0)) : '', high);
  const fullTime = time ?? (high ? '23:59:59.999' : '00:00:00.000');
  if (rest && !time) return undefined;
  return cutDateTime(`${date}T${fullTime}${zone}`, precision, 'dateTime');
}
