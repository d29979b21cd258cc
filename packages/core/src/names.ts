/** Human names (hl7.org/fhir/R4/datatypes.html#HumanName) as text. */
import type { HumanName } from '@hearth/fhir-types';

export interface HumanNameFormatOptions {
  /** Include prefixes ('Dr.'). Default true. */
  prefix?: boolean;
  /** Include suffixes ('Jr.'). Default true. */
  suffix?: boolean;
  /** Add the name's use in parentheses, e.g. '(maiden)'. Default false. */
  use?: boolean;
  /** Use the name's `text` when it has one instead of its parts. Default true. */
  preferText?: boolean;
}

function join(parts: (string | undefined)[]): string {
  return parts
    .map((p) => p?.trim())
    .filter((p): p is string => !!p)
    .join(' ');
}

/**
 * 'Dr. Ada King Lovelace Jr.': prefixes, given names, family name and suffixes, each included
 * unless turned off, or the name's `text` when there is one.
 */
export function formatHumanName(name: HumanName | undefined, options: HumanNameFormatOptions = {}): string {
  if (!name) {
    return '';
  }
  let text: string;
  if (name.text && options.preferText !== false) {
    text = name.text.trim();
  } else {
    text = join([
      ...(options.prefix === false ? [] : (name.prefix ?? [])),
      ...(name.given ?? []),
      name.family,
      ...(options.suffix === false ? [] : (name.suffix ?? [])),
    ]);
  }
  if (options.use && name.use && text) {
    text += ` (${name.use})`;
  }
  return text;
}

/** The given names: 'Ada King'. */
export function formatGivenName(name: HumanName | undefined): string {
  return join(name?.given ?? []);
}

/** The family name: 'Lovelace'. */
export function formatFamilyName(name: HumanName | undefined): string {
  return name?.family?.trim() ?? '';
}

/**
 * The name to show from a list: the official one in use today, else the usual one, else the
 * first one not marked old, else the first.
 */
export function selectHumanName(names: HumanName[] | undefined, at: Date = new Date()): HumanName | undefined {
  if (!names?.length) {
    return undefined;
  }
  const current = names.filter((n) => n.use !== 'old' && isCurrent(n.period, at));
  return current.find((n) => n.use === 'official') ?? current.find((n) => n.use === 'usual') ?? current[0] ?? names[0];
}

function isCurrent(period: { start?: string; end?: string } | undefined, at: Date): boolean {
  if (!period) {
    return true;
  }
  const t = at.getTime();
  return (!period.start || Date.parse(period.start) <= t) && (!period.end || Date.parse(period.end) >= t);
}
