/**
 * The compact type schema: what Hearth needs to know about every FHIR R4 and platform type,
 * distilled from the StructureDefinitions (hl7.org/fhir/R4/structuredefinition.html) into a
 * small JSON document. It is plain data so that it can be built once (at build time) and
 * shipped to any consumer, including the isomorphic validator in @hearth/core.
 */

/** How a type is used. Backbone types are the anonymous nested types of a resource or data type. */
export type TypeKind = 'resource' | 'complex-type' | 'primitive-type' | 'backbone' | 'logical';

export interface ElementType {
  /**
   * A type name: a primitive ('string'), a data type ('CodeableConcept'), a resource ('Patient',
   * 'Resource') or, for nested elements, the backbone type named by its path ('Patient.contact').
   */
  code: string;
  /** Allowed targets of a Reference or canonical, as StructureDefinition URLs. */
  targetProfile?: string[];
  /** Profiles the value must conform to (kept as data; not enforced by the validator). */
  profile?: string[];
}

export interface ElementBinding {
  strength: 'required' | 'extensible' | 'preferred' | 'example';
  /** The value set's canonical URL, without a `|version` suffix. */
  valueSet: string;
}

/**
 * An invariant of an element or type (hl7.org/fhir/R4/conformance-rules.html#constraints): a
 * FHIRPath expression that is true for every conformant instance.
 */
export interface ConstraintSchema {
  key: string;
  severity: 'error' | 'warning';
  human: string;
  expression: string;
}

export interface ElementSchema {
  /** Full path as in the StructureDefinition: 'Observation.value[x]', 'Patient.contact.name'. */
  path: string;
  min: number;
  /** As in FHIR: '1', '*', or a number as a string. */
  max: string;
  /** True when the JSON form is an array (based on the base definition's max). */
  isArray: boolean;
  /** Allowed types; more than one only for a choice element (name ending in `[x]`). */
  type: ElementType[];
  isSummary?: boolean;
  isModifier?: boolean;
  /** For elements defined by reference to another, e.g. '#Questionnaire.item'. */
  contentReference?: string;
  binding?: ElementBinding;
  /** The element's own invariants (inherited ones such as ele-1 stay with the type that defines them). */
  constraint?: ConstraintSchema[];
}

export interface TypeSchema {
  name: string;
  kind: TypeKind;
  /** Name of the base type ('DomainResource', 'Element', 'BackboneElement'...). */
  base?: string;
  abstract?: boolean;
  /** Canonical URL of the StructureDefinition that defines it (not for backbone types). */
  url?: string;
  /** True for Hearth's own platform types. */
  platform?: boolean;
  /** Invariants of the type's root element that the type itself defines (not its base's). */
  constraint?: ConstraintSchema[];
  /** Elements keyed by their name as written in the definition ('gender', 'value[x]'). */
  elements: Record<string, ElementSchema>;
}

/**
 * What the validator needs of an extension definition (hl7.org/fhir/R4/extensibility.html): the
 * value types it allows (none: a complex extension, its content is nested extensions) and the
 * contexts it may be used in (element paths or type names, 'Element' for anywhere).
 */
export interface ExtensionSchema {
  types: string[];
  contexts: string[];
  /** Whether it is a modifier extension (Extension.isModifier of the definition's root). */
  modifier?: boolean;
}

export interface FhirSchema {
  /** FHIR version, '4.0.1'. */
  fhirVersion: string;
  /** Identifies the inputs the schema was built from; a stale prebuilt file is ignored. */
  fingerprint: string;
  types: Record<string, TypeSchema>;
  /**
   * Enumerated expansions of the value sets used by required bindings, keyed by URL. Each
   * entry is 'system|code'. A value set that cannot be enumerated (a filter, an external
   * code system like UCUM or BCP-13) is absent, and the binding is then not checked.
   */
  valueSets: Record<string, string[]>;
  /** The R4 extension definitions (extension-definitions.json), by canonical URL. */
  extensions?: Record<string, ExtensionSchema>;
  /** The specification's OperationDefinitions (hl7.org/fhir/R4/operationslist.html), by id (`ValueSet-expand`). */
  operations: Record<string, OperationDefinitionJson>;
  /**
   * Profiles of the specification that instances SHALL conform to without declaring them (R4's
   * vital signs, hl7.org/fhir/R4/observation-vitalsigns.html), by url, snapshots trimmed.
   */
  profiles?: Record<string, ProfileSchema>;
  /** When those profiles apply: the first rule whose codes meet the resource's `code` (see vital-signs.ts). */
  profilesByCode?: ProfileByCode[];
}

/** An ElementDefinition of a profile's snapshot, trimmed to what profile validation reads. */
export interface ProfileElementSchema {
  id?: string;
  path: string;
  sliceName?: string;
  min?: number;
  max?: string;
  type?: { code: string; profile?: string[]; targetProfile?: string[] }[];
  binding?: { strength: string; valueSet?: string };
  slicing?: { discriminator?: { type: string; path: string }[]; ordered?: boolean; rules?: string };
  maxLength?: number;
  constraint?: { key: string; severity: string; human: string; expression?: string }[];
  /** fixed[x] and pattern[x], by their typed names (fixedCode, patternCodeableConcept...). */
  [key: string]: unknown;
}

/** A profile (a constraint StructureDefinition) with its snapshot. */
export interface ProfileSchema {
  resourceType: 'StructureDefinition';
  url: string;
  name?: string;
  type: string;
  kind?: string;
  derivation?: string;
  baseDefinition?: string;
  snapshot: { element: ProfileElementSchema[] };
}

/** A resource of `type` whose `code` has a coding 'system|code' of `codes` SHALL conform to `profile`. */
export interface ProfileByCode {
  type: string;
  profile: string;
  codes: string[];
}

/** An R4 OperationDefinition as JSON (typed in @hearth/fhir-types; kept loose here). */
export interface OperationDefinitionJson {
  resourceType: 'OperationDefinition';
  id: string;
  url: string;
  code: string;
  [field: string]: unknown;
}
