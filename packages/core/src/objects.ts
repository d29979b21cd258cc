/**
 * Structural helpers for JSON values (resources are JSON): equality, copies, emptiness. A key
 * holding `undefined` counts as absent, as it is once serialized.
 */

/** True for a plain object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for undefined, null, '', [], and objects with no defined keys. */
export function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') {
    return true;
  }
  if (Array.isArray(value)) {
    return value.length === 0;
  }
  if (isObject(value)) {
    return Object.values(value).every((v) => v === undefined);
  }
  return false;
}

/** The opposite of isEmpty. */
export function isPopulated<T>(value: T | undefined | null): value is T {
  return !isEmpty(value);
}

/**
 * Deep structural equality of JSON values: same keys (ignoring undefined), same array order.
 * With `ignoreMeta`, the server-maintained meta.versionId, meta.lastUpdated and meta.author of
 * resources are left out, so that a resource equals its stored version.
 */
export function deepEquals(a: unknown, b: unknown, options: { ignoreMeta?: boolean } = {}): boolean {
  return equals(a, b, options.ignoreMeta ?? false, '');
}

const SERVER_META = new Set(['meta.versionId', 'meta.lastUpdated', 'meta.author']);

function equals(a: unknown, b: unknown, ignoreMeta: boolean, path: string): boolean {
  if (a === b) {
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) {
      return false;
    }
    return a.every((v, i) => equals(v, b[i], ignoreMeta, path));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      const child = path ? `${path}.${key}` : key;
      if (ignoreMeta && SERVER_META.has(child)) {
        continue;
      }
      if (ignoreMeta && child === 'meta' && isEmptyMeta(a.meta) && isEmptyMeta(b.meta)) {
        continue;
      }
      if (!equals(a[key], b[key], ignoreMeta, child)) {
        return false;
      }
    }
    return true;
  }
  // Numbers, strings, booleans that differ; NaN never equals NaN in JSON (it is not JSON).
  return false;
}

function isEmptyMeta(meta: unknown): boolean {
  return (
    meta === undefined ||
    (isObject(meta) && Object.keys(meta).every((k) => SERVER_META.has(`meta.${k}`) || meta[k] === undefined))
  );
}

/** A deep copy of a JSON value (structuredClone where there is one). */
export function deepClone<T>(value: T): T {
  if (value === undefined) {
    return value;
  }
  if (typeof globalThis.structuredClone === 'function') {
    return globalThis.structuredClone(value);
  }
  return JSON.parse(JSON.stringify(value)) as T;
}

/** JSON with object keys sorted, so that equal values give equal text (for keys, hashes, diffs). */
export function stableStringify(value: unknown, space?: number): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) =>
      isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
    space,
  );
}
