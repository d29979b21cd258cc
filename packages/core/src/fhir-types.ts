/**
 * FHIR R4 types. Every resource, data type and backbone element is generated from the
 * definitions in `@hearth/fhir-types` and re-exported here, with three exceptions that keep the
 * server's generic code simple:
 *
 * - `Resource` is the shape of any resource as JSON (`resourceType` plus any fields). Every
 *   generated resource type (`Patient`, `Observation`, ...) is assignable to it. The typed union
 *   of all resources is {@link FhirResource}.
 * - `Bundle<T>` and `BundleEntry<T>` are the generated ones, with `T` defaulting to that generic
 *   `Resource` so that bundles of any resource can be built without naming types.
 */
import type {
  Bundle as GeneratedBundle,
  BundleEntry as GeneratedBundleEntry,
  Meta,
  Resource as ResourceUnion,
} from '@hearth/fhir-types';

export type * from '@hearth/fhir-types';

/** Any resource as JSON: its type, id, meta and any other elements. */
export interface Resource {
  resourceType: string;
  id?: string;
  meta?: Meta;
  [key: string]: unknown;
}

/** The union of every FHIR R4 and platform resource type; narrow it by `resourceType`. */
export type FhirResource = ResourceUnion;

/** A Bundle (hl7.org/fhir/R4/bundle.html) whose entries hold resources of type T. */
export type Bundle<T = Resource> = GeneratedBundle<T>;

/** One entry of a Bundle holding a resource of type T. */
export type BundleEntry<T = Resource> = GeneratedBundleEntry<T>;
