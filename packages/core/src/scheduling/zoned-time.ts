// Wall-clock times in an IANA time zone ("Europe/Paris") as instants, with Intl alone: working
// hours are local ("09:00 on Mondays in Paris"), Slots are instants (hl7.org/fhir/R4/slot.html).

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when the runtime knows the zone (an IANA name such as America/New_York, or UTC). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The local calendar fields of an instant in a zone. */
export function localParts(epochMs: number, timeZone: string): LocalDateTime {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(epochMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    hour: parts.hour,
    minute: parts.minute,
    second: parts.second,
  };
}

export interface LocalDateTime {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** How far ahead of UTC the zone's clocks are at an instant, in ms. */
function offsetAt(epochMs: number, timeZone: string): number {
  const p = localParts(epochMs, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/**
 * The instant at which the zone's clocks show this wall-clock time. In a spring-forward gap (a
 * time that does not exist) the clocks' later reading is used (02:30 → 03:30); in a fall-back
 * overlap (a time shown twice) the first one.
 */
export function zonedToEpoch(local: LocalDateTime, timeZone: string): number {
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  // Two offsets can apply around a transition: try the one before and the one after.
  const before = offsetAt(wall - 86_400_000, timeZone);
  const after = offsetAt(wall + 86_400_000, timeZone);
  const candidates = [...new Set([before, after])]
    .map((offset) => wall - offset)
    .filter((epoch) => offsetAt(epoch, timeZone) === wall - epoch)
    .sort((a, b) => a - b);
  if (candidates.length > 0) return candidates[0];
  // A gap: the wall time never shows; move it forward by the jump.
  return wall - before;
}

/** The local date (YYYY-MM-DD) an instant falls on in a zone. */
export function localDate(epochMs: number, timeZone: string): string {
  const p = localParts(epochMs, timeZone);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}
