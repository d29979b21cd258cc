// cql-exec-fhir ships no types: the part Hearth uses (its FHIR 4.0.1 PatientSource).
declare module 'cql-exec-fhir' {
  import type { PatientObject } from 'cql-execution';

  export interface FhirPatientSource {
    /** Forgets the loaded bundles. */
    reset(): void;
    /** Bundles of one patient's record each (the Patient among the entries). */
    loadBundles(bundles: unknown[]): void;
    currentPatient(): PatientObject | undefined;
  }

  const cqlFhir: { PatientSource: { FHIRv401(options?: { requireProfileTagging?: boolean }): FhirPatientSource } };
  export default cqlFhir;
}
