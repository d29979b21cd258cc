import type { Repository } from '../storage/repository.js';

/** What every FHIR interaction and operation needs about the request it serves. */
export interface FhirContext {
  /** The caller's repository: its projects, author and access rules. */
  repo: Repository;
  /** Absolute FHIR base, ending in '/': http://host/fhir/R4/ */
  fhirBase: string;
  requestId: string;
}
