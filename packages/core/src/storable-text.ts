/**
 * Text that PostgreSQL can store: no NUL (U+0000; `text` and `jsonb` refuse it) and no unpaired
 * UTF-16 surrogate (it has no UTF-8 form: the driver would silently write U+FFFD instead).
 * Both can reach a JavaScript string through JSON escapes (`\u0000`, `\ud800`) or a percent-encoded
 * `%00`; every other character is storable.
 */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** A single character class scans several times faster than the lookarounds above. */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const SUSPECT = /[\u0000\ud800-\udfff]/;

/**
 * What in `text` cannot be stored, worded for a message ("a NUL character (U+0000)"), or
 * undefined when all of it can.
 */
export function unstorableCharacter(text: string): string | undefined {
  const found = SUSPECT.test(text) ? UNSTORABLE.exec(text) : null;
  if (!found) {
    return undefined;
  }
  const c = found[0].charCodeAt(0);
  return c === 0 ? 'a NUL character (U+0000)' : `an unpaired UTF-16 surrogate (U+${c.toString(16).toUpperCase()})`;
}

/** `text` with its unstorable characters replaced by U+FFFD, to quote it in a message. */
export function printableText(text: string): string {
  return text.replace(new RegExp(UNSTORABLE.source, 'g'), '\ufffd');
}
