import { badRequest, fail } from '@hearth/core';

const DATE_TIME =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

/**
 * A FHIR date/dateTime/instant as the interval it covers: '2020' is all of 2020, '2020-03-04T10:00'
 * the whole minute. Times without a zone are read as UTC. (hl7.org/fhir/R4/search.html#date)
 */
export function parseDateBound(text: string, param: string): { start: Date; end: Date } {
  const m = DATE_TIME.exec(text.trim());
  if (!m) {
    fail(badRequest(`${param}: "${text}" is not a valid date`, param));
  }
  const [, y, mo, d, h, mi, s, frac, tz] = m;
  const year = Number(y);
  const month = mo ? Number(mo) - 1 : 0;
  const day = d ? Number(d) : 1;
  const hour = h ? Number(h) : 0;
  const minute = mi ? Number(mi) : 0;
  const second = s ? Number(s) : 0;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  if (month > 11 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    fail(badRequest(`${param}: "${text}" is not a valid date`, param));
  }
  let offsetMinutes = 0;
  if (tz && tz !== 'Z') {
    const sign = tz[0] === '-' ? -1 : 1;
    offsetMinutes = sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(4, 6)));
  }
  const startMs = Date.UTC(year, month, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  let endMs: number;
  if (!mo) {
    endMs = Date.UTC(year + 1, 0, 1) - offsetMinutes * 60_000;
  } else if (!d) {
    endMs = Date.UTC(year, month + 1, 1) - offsetMinutes * 60_000;
  } else if (!h) {
    endMs = Date.UTC(year, month, day + 1) - offsetMinutes * 60_000;
  } else if (!s) {
    endMs = startMs + 60_000;
  } else if (!frac) {
    endMs = startMs + 1000;
  } else {
    endMs = startMs + 1;
  }
  return { start: new Date(startMs), end: new Date(endMs) };
}
