/**
 * The part of the type schema the validator reads. @hearth/definitions builds the full schema
 * (getSchema() in Node); any object of this shape works, so the validator stays isomorphic and
 * can run in a browser with a schema fetched or bundled as JSON.
 */

/** An invariant (hl7.org/fhir/R4/conformance-rules.html#constraints): a FHIRPath expression every instance satisfies. */
export interface ValidatorConstraint {
  key: string;
  severity: 'error' | 'warning';
  human: string;
  expression: string;
}

export interface ValidatorElement {
  path: string;
  min: number;
  /** '1', '*', or a number as a string. */
  max: string;
  isArray: boolean;
  /** Allowed types; targetProfile lists the StructureDefinition URLs a Reference may point to. */
  type: { code: string; targetProfile?: string[] }[];
  binding?: { strength: string; valueSet: string };
  /** The element's own invariants, checked on each of its values. */
  constraint?: ValidatorConstraint[];
}

export interface ValidatorType {
  name: string;
  kind: string;
  abstract?: boolean;
  /** The type it specializes ('DomainResource', 'Quantity'): its invariants apply too. */
  base?: string;
  /** Invariants of the type itself, checked on each instance. */
  constraint?: ValidatorConstraint[];
  elements: Record<string, ValidatorElement>;
}

/** An extension definition: its value types (none for a complex one) and where it may be used. */
export interface ValidatorExtension {
  types: string[];
  /** Element paths or type names ('Patient', 'Observation.value[x]', 'Element' for anywhere). */
  contexts: string[];
  modifier?: boolean;
}

export interface ValidatorSchema {
  types: Record<string, ValidatorType>;
  /** Known extension definitions by url; an extension with none is not checked (unless a modifier). */
  extensions?: Record<string, ValidatorExtension>;
  /** Expansions of required-binding value sets: URL -> ['system|code', ...]. */
  valueSets: Record<string, string[]>;
  /**
   * Profiles of the specification that instances SHALL conform to without declaring them (R4's
   * vital signs, hl7.org/fhir/R4/observation-vitalsigns.html), by url, with snapshots.
   */
  profiles?: Record<string, ProfileDefinition>;
  /**
   * When they apply: a resource of `type` whose `code` has a coding 'system|code' among `codes`
   * SHALL conform to `profile`; the first rule that matches applies.
   */
  profilesByCode?: { type: string; profile: string; codes: string[] }[];
}

/** An ElementDefinition as JSON, with the parts profile validation reads (fixed[x]/pattern[x] by key). */
export interface ProfileElement {
  id?: string;
  path: string;
  sliceName?: string;
  min?: number;
  max?: string;
  type?: { code: string; profile?: string[]; targetProfile?: string[] }[];
  binding?: { strength: string; valueSet?: string };
  slicing?: {
    discriminator?: { type: string; path: string }[];
    ordered?: boolean;
    rules?: string;
  };
  maxLength?: number;
  /** Invariants; those of the base definitions are the structural validator's. */
  constraint?: { key: string; severity: string; human: string; expression?: string }[];
  [key: string]: unknown;
}

/** A StructureDefinition as JSON: the parts profile validation reads. */
export interface ProfileDefinition {
  resourceType: 'StructureDefinition';
  url: string;
  name?: string;
  type: string;
  kind?: string;
  derivation?: string;
  baseDefinition?: string;
  snapshot?: { element?: ProfileElement[] };
  differential?: { element?: ProfileElement[] };
}
