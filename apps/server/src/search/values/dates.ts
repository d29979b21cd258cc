/**
 * FHIR date, dateTime and instant values as half-open ranges [low, high) in epoch milliseconds
 * (hl7.org/fhir/R4/search.html#date): a partial date covers its whole year, month or day; a time
 * covers its precision (a minute, a second, a millisecond). Values without a time zone are read
 * as UTC.
 */
export interface DateRange {
  low: number;
  high: number;
}

const DATE_RE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

/**
 * Epoch ms of a UTC date-time. The year is set together with month and day, so that an overflowing
 * day or month (31 December + 1) carries into the right year (Date.UTC alone maps years 0-99 to 19xx).
 */
function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(y, mo, d);
  date.setUTCHours(h, mi, s, ms);
  return date.getTime();
}

/** Parses a FHIR date/dateTime/instant; undefined when malformed. */
export function parseDateRange(text: string): DateRange | undefined {
  const m = DATE_RE.exec(text.trim());
  if (!m) {
    return undefined;
  }
  const y = Number(m[1]);
  if (m[2] === undefined) {
    return { low: utc(y, 0, 1), high: utc(y + 1, 0, 1) };
  }
  const mo = Number(m[2]);
  if (mo < 1 || mo > 12) {
    return undefined;
  }
  if (m[3] === undefined) {
    return { low: utc(y, mo - 1, 1), high: utc(y, mo, 1) };
  }
  const d = Number(m[3]);
  const dayStart = utc(y, mo - 1, d);
  if (d < 1 || new Date(dayStart).getUTCMonth() !== mo - 1) {
    return undefined;
  }
  if (m[4] === undefined) {
    return { low: dayStart, high: utc(y, mo - 1, d + 1) };
  }
  const h = Number(m[4]);
  const mi = Number(m[5]);
  if (h > 24 || mi > 59) {
    return undefined;
  }
  let offsetMs = 0;
  const tz = m[8];
  if (tz && tz !== 'Z') {
    const sign = tz[0] === '-' ? -1 : 1;
    const oh = Number(tz.slice(1, 3));
    const om = Number(tz.slice(4, 6));
    if (oh > 14 || om > 59) {
      return undefined;
    }
    offsetMs = sign * (oh * 60 + om) * 60_000;
  }
  if (m[6] === undefined) {
    const low = utc(y, mo - 1, d, h, mi) - offsetMs;
    return { low, high: low + 60_000 };
  }
  const s = Number(m[6]);
  if (s > 60) {
    return undefined;
  }
  const fraction = m[7];
  if (!fraction) {
    const low = utc(y, mo - 1, d, h, mi, s) - offsetMs;
    return { low, high: low + 1000 };
  }
  const digits = fraction.length - 1;
  const ms = Math.floor(Number(fraction) * 1000);
  const low = utc(y, mo - 1, d, h, mi, s, ms) - offsetMs;
  // Sub-millisecond precision still covers at least one millisecond (PostgreSQL keeps microseconds,
  // JavaScript milliseconds).
  return { low, high: low + Math.max(1, Math.round(1000 / 10 ** digits)) };
}

/** An epoch-millisecond bound as a PostgreSQL timestamptz literal ('infinity' for open ends). */
export function toTimestamp(ms: number): string {
  if (ms === Infinity) {
    return 'infinity';
  }
  if (ms === -Infinity) {
    return '-infinity';
  }
  return new Date(ms).toISOString();
}

/** Earliest and latest instants PostgreSQL and JavaScript both represent; values beyond are clamped. */
const MIN_MS = utc(1, 0, 1);
const MAX_MS = utc(9999, 11, 31, 23, 59, 59, 999);

export function clampMs(ms: number): number {
  if (!Number.isFinite(ms)) {
    return ms;
  }
  return Math.min(MAX_MS, Math.max(MIN_MS, ms));
}
