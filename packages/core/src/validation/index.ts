export { checkPrimitive, FHIR_PRIMITIVE_TYPES, validationRegexes } from './primitives.js';
export type { ValidatorElement, ValidatorSchema, ValidatorType } from './schema.js';
export {
  assertValidResource,
  createValidator,
  validateResource,
  validateResourceType,
  type ValidateOptions,
  type ValidationChecks,
  type Validator,
} from './validator.js';
export { ProfileValidator, type ProfileValidatorOptions } from './profiles.js';
export { snapshotElements, type ProfileDefinition, type ProfileElement } from './snapshot.js';
