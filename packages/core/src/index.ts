/**
 * The Hearth TypeScript SDK: `HearthClient` (sign-in, FHIR REST, operations, binaries, project
 * administration), the FHIR R4 and platform types, OperationOutcome helpers, search request
 * parsing, FHIRPath, display and validation helpers. For browsers and Node 20, ESM and CommonJS.
 * @module @hearth/core
 */
export * from './fhir-types.js';
export * from './ids.js';
export * from './outcome.js';
export * from './validation/index.js';
export * from './search/index.js';
export * from './client/index.js';
export * from './fhirpath.js';
export * from './references.js';
export * from './names.js';
export * from './dates.js';
export * from './display.js';
export * from './identifiers.js';
export * from './extensions.js';
export * from './objects.js';
export * from './storable-text.js';
export * from './subscriptions/index.js';
export * from './agent/index.js';
export * from './hl7/index.js';
export * from './astm/index.js';
export * from './async-jobs.js';
export * from './labs.js';
export * from './sig.js';
export * from './messaging.js';
export * from './scheduling/index.js';
