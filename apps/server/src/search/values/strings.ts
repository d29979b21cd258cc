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
