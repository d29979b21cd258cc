export * from './files.js';
export * from './resource-types.js';
export { HEARTH_FHIR_BASE, PLATFORM_STRUCTURE_DEFINITIONS, PLATFORM_TERMINOLOGY } from './platform/index.js';
export type {
  ElementBinding,
  ElementSchema,
  ExtensionSchema,
  ConstraintSchema,
  ElementType,
  FhirSchema,
  OperationDefinitionJson,
  ProfileByCode,
  ProfileElementSchema,
  ProfileSchema,
  TypeKind,
  TypeSchema,
} from './schema/types.js';
export { buildSchema, SCHEMA_BUILDER_VERSION, type SchemaSources } from './schema/build.js';
export {
  buildSchemaFromFiles,
  getSchema,
  loadPrebuiltSchema,
  prebuiltSchemaPath,
  schemaFingerprint,
  writePrebuiltSchema,
} from './schema/load.js';
export {
  choiceName,
  findProperty,
  getElement,
  getOperationDefinition,
  getResourceTypeNames,
  getSummaryElements,
  getTypeSchema,
  isResourceType,
  type ElementMatch,
} from './schema/query.js';
