export type { ClientEvent } from './base.js';
export { HearthClient } from './client.js';
export {
  bundleToResourceArray,
  type AnyResource,
  type ResourceArray,
  type UpdateOptions,
  type WrittenResource,
} from './fhir.js';
export {
  createFhircastEvent,
  type FhircastContextItem,
  type FhircastCurrentContext,
  type FhircastEvent,
  type FhircastEventName,
} from './fhircast.js';
export {
  readTranslateOutput,
  translateParameters,
  type BulkImportInput,
  type BulkImportManifest,
  type ConceptMapTranslateMatch,
  type ConceptMapTranslateOutput,
  type ConceptMapTranslateParams,
} from './operations.js';
export { DEFAULT_ACCEPT, FHIR_JSON, JSON_PATCH, toSearchParams, type QueryTypes } from './http.js';
export { computeCodeChallenge, generateCodeVerifier, parseJwtPayload } from './pkce.js';
export { LocalStorage, MemoryStorage, type ClientStorage } from './storage.js';
export type * from './types.js';
