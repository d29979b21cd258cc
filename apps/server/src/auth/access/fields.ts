/**
 * Field paths of hiddenFields and readonlyFields: "secret", "name.family", "identifier.value".
 * A path walks through objects and every element of arrays; primitive extensions ("_birthDate")
 * go with their field.
 */
import { copyKeepingDecimals } from '../../storage/decimal-json.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Removes a field path from a resource in place. */
export function removePath(target: Json, path: string[]): void {
  const [head, ...rest] = path;
  if (rest.length === 0) {
    delete target[head];
    delete target[`_${head}`];
    return;
  }
  const next = target[head];
  for (const item of Array.isArray(next) ? next : [next]) {
    if (isObject(item)) {
      removePath(item, rest);
    }
  }
}

export function splitPath(field: string, resourceType: string): string[] {
  const parts = field.split('.');
  return parts[0] === resourceType ? parts.slice(1) : parts;
}

/** A deep copy of a resource without the given fields. */
export function withoutFields<T extends object>(resource: T, fields: string[], resourceType: string): T {
  if (fields.length === 0) {
    return resource;
  }
  const copy = structuredClone(resource) as Json;
  for (const field of fields) {
    removePath(copy, splitPath(field, resourceType));
  }
  return copy as T;
}

/**
 * The resource with the given fields as they were in `previous` (removed when `previous` had none):
 * a writer cannot change what it may not write or see. Top-level paths copy the value exactly;
 * nested paths keep the previous element's value where the element is still there by position.
 */
export function keepFields<T extends object>(
  resource: T,
  previous: object | undefined,
  fields: string[],
  resourceType: string,
): T {
  if (fields.length === 0) {
    return resource;
  }
  // The written resource's decimals keep their text (1.0) through the copy.
  const copy = copyKeepingDecimals(resource) as Json;
  for (const field of fields) {
    const path = splitPath(field, resourceType);
    restorePath(copy, previous as Json | undefined, path);
  }
  return copy as T;
}

function restorePath(target: Json, previous: Json | undefined, path: string[]): void {
  const [head, ...rest] = path;
  if (rest.length === 0) {
    for (const key of [head, `_${head}`]) {
      if (previous && key in previous) {
        target[key] = structuredClone(previous[key]);
      } else {
        delete target[key];
      }
    }
    return;
  }
  const next = target[head];
  const prev = previous?.[head];
  if (Array.isArray(next)) {
    next.forEach((item, i) => {
      if (isObject(item)) {
        restorePath(item, Array.isArray(prev) && isObject(prev[i]) ? (prev[i] as Json) : undefined, rest);
      }
    });
  } else if (isObject(next)) {
    restorePath(next, isObject(prev) ? prev : undefined, rest);
  }
}
