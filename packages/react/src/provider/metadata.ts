/**
 * What the components know about FHIR types and search parameters in a browser: the compact type
 * schema of @hearth/definitions (built into the app by scripts/metadata.mjs) and each resource
 * type's search parameters (hl7.org/fhir/R4/searchparameter-registry.html).
 */
import type { SearchParamType } from '@hearth/core';

export interface UiElementType {
  code: string;
  targetProfile?: string[];
}

export interface UiElement {
  min: number;
  max: string;
  isArray: boolean;
  type: UiElementType[];
  binding?: { strength: 'required' | 'extensible' | 'preferred' | 'example'; valueSet: string };
  contentReference?: string;
  isSummary?: boolean;
}

export interface UiTypeSchema {
  name: string;
  kind: 'resource' | 'complex-type' | 'primitive-type' | 'backbone' | 'logical';
  platform?: boolean;
  elements: Record<string, UiElement>;
}

export interface SearchParamInfo {
  code: string;
  type: SearchParamType;
  target?: string[];
  /** The FHIRPath of the values, for this type. */
  expression?: string;
  description?: string;
}

export interface UiMetadata {
  types: Record<string, UiTypeSchema>;
  /** Enumerated required value sets: url → 'system|code' entries. */
  valueSets: Record<string, string[]>;
  /** Search parameters by resource type; '*' holds those of every resource. */
  searchParams: Record<string, SearchParamInfo[]>;
  /** Every concrete resource type, when the types themselves are loaded one by one. */
  resourceTypes?: string[];
  /**
   * The Patient compartment's member types (hl7.org/fhir/R4/compartmentdefinition-patient.html),
   * each with the date search parameter that orders it in time and that parameter's expression;
   * none for a type without a clinical date.
   */
  patientCompartment?: Record<string, { date?: string; expression?: string }>;
}

/** What one resource type adds to the metadata: its types, value sets and search parameters. */
export type UiMetadataPart = Pick<UiMetadata, 'types' | 'valueSets' | 'searchParams'>;

/** Metadata loaded in parts: the data types first, then each resource type on first use. */
export interface UiMetadataSource {
  loadBase: () => Promise<UiMetadata>;
  /** Undefined for a type it does not know. */
  loadType: (resourceType: string) => Promise<UiMetadataPart> | undefined;
}

/** The metadata with one more part merged in. */
export function mergeMetadata(metadata: UiMetadata, part: UiMetadataPart): UiMetadata {
  return {
    ...metadata,
    types: { ...metadata.types, ...part.types },
    valueSets: { ...metadata.valueSets, ...part.valueSets },
    searchParams: { ...metadata.searchParams, ...part.searchParams },
  };
}

/** Whether the metadata holds a resource type's own definitions (not only its name). */
export function hasTypeLoaded(metadata: UiMetadata, resourceType: string): boolean {
  return !!metadata.types[resourceType];
}

/** Whether the resource type exists at all (loaded or not). */
export function isKnownResourceType(metadata: UiMetadata, resourceType: string): boolean {
  return metadata.resourceTypes ? metadata.resourceTypes.includes(resourceType) : !!metadata.types[resourceType];
}

/** Every concrete resource type, sorted. */
export function getResourceTypes(metadata: UiMetadata): string[] {
  if (metadata.resourceTypes) {
    return metadata.resourceTypes;
  }
  return Object.values(metadata.types)
    .filter((t) => t.kind === 'resource' && t.name !== 'Resource' && t.name !== 'DomainResource')
    .map((t) => t.name)
    .sort();
}

export function getSearchParams(metadata: UiMetadata, resourceType: string): SearchParamInfo[] {
  return [...(metadata.searchParams['*'] ?? []), ...(metadata.searchParams[resourceType] ?? [])];
}

export function getSearchParam(metadata: UiMetadata, resourceType: string, code: string): SearchParamInfo | undefined {
  return getSearchParams(metadata, resourceType).find((p) => p.code === code);
}

/** The element of a choice ('value[x]') or a plain name. */
export function choiceBase(key: string): string {
  return key.endsWith('[x]') ? key.slice(0, -3) : key;
}

/** 'value' + 'Quantity' → 'valueQuantity' (hl7.org/fhir/R4/formats.html#choice). */
export function choiceProperty(key: string, typeCode: string): string {
  return choiceBase(key) + typeCode.charAt(0).toUpperCase() + typeCode.slice(1);
}

/**
 * The type schema an element's values have: a data type, a backbone type named by its path, or
 * the target of a contentReference ('#Questionnaire.item').
 */
export function elementTypeSchema(
  metadata: UiMetadata,
  element: UiElement,
  typeCode: string,
): UiTypeSchema | undefined {
  if (element.contentReference) {
    return metadata.types[element.contentReference.replace(/^#/, '')];
  }
  return metadata.types[typeCode];
}

/** Allowed target resource types of a Reference element (empty: any). */
export function referenceTargets(type: UiElementType | undefined): string[] {
  return (type?.targetProfile ?? [])
    .map((url) => url.split('/').pop() ?? '')
    .filter((name) => name && name !== 'Resource');
}

/** The codes of a required binding's value set, when the schema enumerates it. */
export function bindingCodes(metadata: UiMetadata, element: UiElement): { system: string; code: string }[] | undefined {
  const url = element.binding?.valueSet;
  const entries = url ? metadata.valueSets[url] : undefined;
  return entries?.map((entry) => {
    const bar = entry.lastIndexOf('|');
    return { system: entry.slice(0, bar), code: entry.slice(bar + 1) };
  });
}

/**
 * The element a search parameter's expression reaches, when the expression is a plain path
 * ('Patient.gender', 'Observation.code'); undefined for anything with functions or unions.
 */
export function searchParamElement(
  metadata: UiMetadata,
  resourceType: string,
  param: SearchParamInfo,
): UiElement | undefined {
  const expression = param.expression?.trim();
  if (!expression || !/^[A-Za-z]+(\.[A-Za-z]+)+$/.test(expression)) {
    return undefined;
  }
  const [type, ...path] = expression.split('.');
  let schema = metadata.types[type === 'Resource' || type === 'DomainResource' ? resourceType : type];
  let element: UiElement | undefined;
  for (const name of path) {
    element = schema?.elements[name];
    if (!element) return undefined;
    schema = elementTypeSchema(metadata, element, element.type[0]?.code ?? '') as UiTypeSchema;
  }
  return element;
}
