// The OperationDefinitions of the FHIR R4 specification (hl7.org/fhir/R4/operationslist.html), read
// from HL7's R4 data that @hearth/definitions locates.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { r4DefinitionsDir } from '@hearth/definitions';
import type { OperationDefinition } from '@hearth/core';

let byId: Map<string, OperationDefinition> | undefined;

/**
 * Reads profiles-resources.json once and keeps only its OperationDefinitions: readR4File would keep
 * the whole parsed file (35 MB of JSON, over 100 MB of heap) for the life of the process, and the
 * server otherwise never needs it (the type schema is prebuilt).
 */
function load(): Map<string, OperationDefinition> {
  const bundle = JSON.parse(readFileSync(join(r4DefinitionsDir(), 'profiles-resources.json'), 'utf8')) as {
    entry: { resource: { resourceType: string; id?: string } }[];
  };
  const map = new Map<string, OperationDefinition>();
  for (const { resource } of bundle.entry) {
    if (resource.resourceType === 'OperationDefinition' && resource.id) {
      map.set(resource.id, resource as OperationDefinition);
    }
  }
  return map;
}

/** The specification's OperationDefinition of this id (e.g. `ValueSet-expand`); a missing one is a programming error. */
export function standardDefinition(id: string): OperationDefinition {
  byId ??= load();
  const definition = byId.get(id);
  if (!definition) {
    throw new Error(`FHIR R4 defines no OperationDefinition/${id}`);
  }
  return definition;
}
