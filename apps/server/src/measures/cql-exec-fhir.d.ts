// cql-exec-fhir ships no types: the part Hearth uses (its FHIR 4.0.1 model and FHIRObject wrapper).
declare module 'cql-exec-fhir' {
  import type { RecordObject } from 'cql-execution';

  export interface FhirWrapper {
    /** A resource as a FHIRObject of its resourceType's class. */
    wrap(json: unknown): RecordObject;
    /**
     * The loaded model info (not in cql-exec-fhir's own typings, but what its Patient.findRecords
     * resolves a Retrieve's data type with): Hearth resolves data types the same way.
     */
    _modelInfo: { findClass(name: string): { name: string } | undefined };
  }

  const cqlFhir: { FHIRWrapper: { FHIRv401(): FhirWrapper } };
  export default cqlFhir;
}
