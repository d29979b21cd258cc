export * from './fhir-types.js';
export * from './ids.js';
export * from './outcome.js';
export * from './validation/index.js';
export * from './search/index.js';
export * from './client/index.js';
