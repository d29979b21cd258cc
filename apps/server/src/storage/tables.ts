import { getAllResourceTypes } from '@hearth/definitions';

/** The types that have a table: fixed by the definitions, read once when the module loads. */
const STORED_TYPES: ReadonlySet<string> = new Set(getAllResourceTypes());

/** True for every type that has a table. Only such names ever reach SQL as identifiers. */
export function isStoredResourceType(type: string): boolean {
  return STORED_TYPES.has(type);
}

function assertKnown(type: string): void {
  if (!isStoredResourceType(type)) {
    throw new Error(`Not a stored resource type: ${type}`);
  }
}

/** Physical table of one type's current versions. */
export function resourceTable(type: string): string {
  assertKnown(type);
  return `"${type}"`;
}

/** Physical table of one type's versions, current and past. */
export function historyTable(type: string): string {
  assertKnown(type);
  return `"${type}_History"`;
}
