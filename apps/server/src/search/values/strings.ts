/** Longest value kept in a string index row; longer text is cut (prefix and :contains still work on the kept part). */
export const MAX_INDEXED_STRING = 512;

/**
 * The form strings are indexed and searched in: accents removed (NFD, combining marks
 * dropped), lower case, spaces collapsed (hl7.org/fhir/R4/search.html#string: "case- and
 * accent-insensitive"). 'Chloé  Müller' -> 'chloe muller'.
 */
export function normalizeString(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) {
    // Plain ASCII (most values): no accents to strip.
    return value.toLowerCase().replace(/ {2,}/g, ' ').trim().slice(0, MAX_INDEXED_STRING);
  }
  return value
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_INDEXED_STRING);
}

/** Escapes LIKE wildcards so a user's text only ever matches literally. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The byte-order range of the strings starting with `prefix` (columns are COLLATE "C"):
 * [prefix, next) where next is the prefix with its last character incremented. Written as a
 * range rather than LIKE 'abc%' so that a prepared (generic) plan still uses the index.
 */
export function prefixRange(prefix: string): { low: string; high?: string } {
  const chars = [...prefix];
  while (chars.length > 0) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last < 0x10ffff && (last + 1 < 0xd800 || last + 1 > 0xdfff)) {
      return { low: prefix, high: chars.join('') + String.fromCodePoint(last + 1) };
    }
  }
  return { low: prefix };
}
