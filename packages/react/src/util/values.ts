/** Reads the value at a path of object keys and array indexes. */
export function getAt(value: unknown, path: readonly (string | number)[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || current === undefined) {
      return undefined;
    }
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** True for values that should not be kept in a resource: undefined, '', empty arrays and objects. */
export function isBlank(value: unknown): boolean {
  if (value === undefined || value === null || value === '') {
    return true;
  }
  if (Array.isArray(value)) {
    return value.every(isBlank);
  }
  if (typeof value === 'object') {
    return Object.values(value as Record<string, unknown>).every(isBlank);
  }
  return false;
}

/**
 * Removes blank values recursively, as a form leaves them behind (FHIR forbids empty elements:
 * hl7.org/fhir/R4/json.html, "empty values are not allowed").
 */
export function prune<T>(value: T): T | undefined {
  if (Array.isArray(value)) {
    const items = value.map((v) => prune(v)).filter((v) => v !== undefined);
    return (items.length ? items : undefined) as T | undefined;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const pruned = prune(v);
      if (pruned !== undefined) {
        out[key] = pruned;
      }
    }
    return (Object.keys(out).length ? out : undefined) as T | undefined;
  }
  return value === '' || value === null || value === undefined ? undefined : value;
}

/** Splits 'camelCase' into 'Camel case' for labels. */
export function humanize(name: string): string {
  const words = name
    .replace(/\[x\]$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
