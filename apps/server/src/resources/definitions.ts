import { createValidator as createSchemaValidator } from '@hearth/core';
import { getSchema, getSummaryElements, getTypeSchema } from '@hearth/definitions';
import type { ResourceValidator } from '../storage/types.js';
import type { ElementShaper } from './elements.js';

/**
 * Validation of every write against the type's definition: the structural validator of
 * @hearth/core over the R4 + platform type schema of @hearth/definitions, built once.
 *
 * The vital signs profiles that R4 requires by code are checked when asked: by `$validate`, and by
 * writes in a project that enforces profiles (storage/write.ts), like declared profiles
 * (resources/profiles.ts), since they are a profile's demands on top of the base definitions.
 * Elsewhere a heart rate without the vital-signs category is stored as before, and one of R4's own
 * examples (Observation-f202, a body temperature without effective[x]) stays storable.
 */
export function createValidator(): ResourceValidator {
  const validator = createSchemaValidator(getSchema());
  return {
    validate: (resource, checks) =>
      validator.validate(resource, { requiredProfiles: checks?.requiredProfiles === true }),
  };
}

/** Summary and mandatory elements for _summary and _elements (hl7.org/fhir/R4/search.html#summary). */
export function createShaper(): ElementShaper {
  const mandatory = new Map<string, Set<string>>();
  return {
    summaryElements(resourceType) {
      return getTypeSchema(resourceType) ? getSummaryElements(resourceType) : undefined;
    },
    mandatoryElements(resourceType) {
      let names = mandatory.get(resourceType);
      if (!names) {
        const type = getTypeSchema(resourceType);
        if (!type) {
          return undefined;
        }
        names = new Set<string>();
        for (const [name, el] of Object.entries(type.elements)) {
          if (el.min >= 1) {
            if (name.endsWith('[x]')) {
              el.type.forEach((t) => names!.add(name.slice(0, -3) + t.code[0].toUpperCase() + t.code.slice(1)));
            } else {
              names.add(name);
            }
          }
        }
        mandatory.set(resourceType, names);
      }
      return names;
    },
  };
}
