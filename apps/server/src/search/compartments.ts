import definitions from './compartment-definitions.json' with { type: 'json' };
import type { RowSet } from './index/rows.js';

/**
 * Compartments (hl7.org/fhir/R4/compartmentdefinition.html): for each compartment type, the
 * resource types in it and the reference parameters that put a resource there. From the R4
 * CompartmentDefinitions (patient, encounter, practitioner, relatedPerson, device).
 */
const DEFINITIONS = definitions as unknown as Record<string, Record<string, string[]>>;

export const COMPARTMENT_TYPES = ['Patient', 'Encounter', 'Practitioner', 'RelatedPerson', 'Device'];

/** The parameters of `resourceType` that link it to a compartment of `compartmentType` ('{def}': itself). */
export function compartmentParams(compartmentType: string, resourceType: string): string[] | undefined {
  return DEFINITIONS[compartmentType]?.[resourceType];
}

/** The resource types in a compartment of the given type (plus the compartment type itself). */
export function compartmentMemberTypes(compartmentType: string): string[] {
  const types = Object.keys(DEFINITIONS[compartmentType] ?? {});
  return types.includes(compartmentType) ? types : [...types, compartmentType];
}

/**
 * The compartments stored with a resource, from its index rows: the Patient compartments it
 * belongs to ('Patient/123'), and for a Patient its own. Only Patient compartments are stored
 * (they drive Patient/123/* searches, $everything and access policies); the others are found
 * through their reference parameters at query time.
 */
export function storedCompartments(resourceType: string, id: string | undefined, rows: RowSet): string[] {
  const params = DEFINITIONS.Patient[resourceType];
  const out = new Set<string>();
  if (resourceType === 'Patient' && id) {
    out.add(`Patient/${id}`);
  }
  if (params) {
    for (const row of rows.reference) {
      const [targetType, targetId] = row.values;
      if (targetType === 'Patient' && targetId && row.grp === 0 && params.includes(row.code)) {
        out.add(`Patient/${targetId}`);
      }
    }
  }
  return [...out];
}
