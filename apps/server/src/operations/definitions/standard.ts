// The OperationDefinitions of the FHIR R4 specification (hl7.org/fhir/R4/operationslist.html), kept
// in the prebuilt type schema of @hearth/definitions (so no process parses HL7's files for them).
import { getOperationDefinition } from '@hearth/definitions';
import type { OperationDefinition } from '@hearth/core';

/** The specification's OperationDefinition of this id (e.g. `ValueSet-expand`); a missing one is a programming error. */
export function standardDefinition(id: string): OperationDefinition {
  const definition = getOperationDefinition(id);
  if (!definition) {
    throw new Error(`FHIR R4 defines no OperationDefinition/${id}`);
  }
  return definition as unknown as OperationDefinition;
}
