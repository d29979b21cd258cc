import { getAllResourceTypes } from '@hearth/definitions';

let list: readonly string[] | undefined;
let set: Set<string> | undefined;

/** Every stored resource type, computed once (the definitions build a new sorted list per call). */
export function resourceTypes(): readonly string[] {
  return (list ??= getAllResourceTypes());
}

export function isResourceTypeName(type: string): boolean {
  return (set ??= new Set(resourceTypes())).has(type);
}
