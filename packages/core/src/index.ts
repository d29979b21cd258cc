export * from './fhir-types.js';
export * from './ids.js';
export * from './outcome.js';
