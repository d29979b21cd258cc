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

/** Where in a JSON value a string cannot be stored. */
export interface UnstorableFound {
  /** FHIRPath-like: `Patient.name[0].family` (a resource starts with its type), `[0].value`, '' for the root. */
  path: string;
  /** What is wrong, worded as by {@link unstorableCharacter}. */
  what: string;
  /** The text is a property name (of the object at `path`), not a value. */
  inName: boolean;
}

/** The first string or property name in a parsed JSON value that cannot be stored, if any. */
export function findUnstorable(value: unknown): UnstorableFound | undefined {
  const type = (value as { resourceType?: unknown } | null)?.resourceType;
  return walk(value, typeof type === 'string' && /^[A-Z][A-Za-z]{0,63}$/.test(type) ? type : '');
}

function walk(value: unknown, path: string): UnstorableFound | undefined {
  if (typeof value === 'string') {
    const what = unstorableCharacter(value);
    return what ? { path, what, inName: false } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const what = unstorableCharacter(key);
      if (what) return { path, what, inName: true };
      const found = walk(child, path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return undefined;
}
