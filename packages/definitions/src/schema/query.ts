/**
 * Questions about types, answered from a FhirSchema. Each function takes the schema last and
 * defaults to the process-wide one (getSchema()).
 */
import { getSchema } from './load.js';
import type { ElementSchema, FhirSchema, OperationDefinitionJson, TypeSchema } from './types.js';

/** The JSON property name of one type of a choice element: value[x] + Quantity -> valueQuantity. */
export function choiceName(elementName: string, typeCode: string): string {
  return elementName.slice(0, -3) + typeCode.charAt(0).toUpperCase() + typeCode.slice(1);
}

export function getTypeSchema(type: string, schema: FhirSchema = getSchema()): TypeSchema | undefined {
  return Object.hasOwn(schema.types, type) ? schema.types[type] : undefined;
}

/** A concrete resource type (R4 or platform); false for Resource, DomainResource and data types. */
export function isResourceType(name: string, schema: FhirSchema = getSchema()): boolean {
  const t = getTypeSchema(name, schema);
  return t?.kind === 'resource' && !t.abstract;
}

/** Every concrete resource type in the schema, sorted. */
export function getResourceTypeNames(schema: FhirSchema = getSchema()): string[] {
  return Object.values(schema.types)
    .filter((t) => t.kind === 'resource' && !t.abstract)
    .map((t) => t.name)
    .sort();
}

export interface ElementMatch {
  element: ElementSchema;
  /** The type the value has: the one type of the element, or the type a choice name selects. */
  type?: string;
}

/** Finds the element a JSON property name stands for, expanding choice names ('valueQuantity'). */
export function findProperty(type: TypeSchema, name: string): ElementMatch | undefined {
  const direct = Object.hasOwn(type.elements, name) ? type.elements[name] : undefined;
  if (direct && !name.endsWith('[x]')) {
    return { element: direct, type: direct.type.length === 1 ? direct.type[0].code : undefined };
  }
  for (const [elementName, element] of Object.entries(type.elements)) {
    if (!elementName.endsWith('[x]') || !name.startsWith(elementName.slice(0, -3))) {
      continue;
    }
    if (name === elementName) {
      return { element };
    }
    const t = element.type.find((x) => choiceName(elementName, x.code) === name);
    if (t) {
      return { element, type: t.code };
    }
  }
  return undefined;
}

/**
 * The definition of a (possibly nested) element: getElement('Patient', 'contact.name.given'),
 * getElement('Observation', 'Observation.valueQuantity.unit'). Follows data types, backbone
 * elements and content references; choice elements match by '[x]' name or by a typed name.
 */
export function getElement(type: string, path: string, schema: FhirSchema = getSchema()): ElementSchema | undefined {
  let current = getTypeSchema(type, schema);
  const segments = (path.startsWith(type + '.') ? path.slice(type.length + 1) : path).split('.');
  let match: ElementMatch | undefined;
  for (let i = 0; i < segments.length; i++) {
    if (!current) {
      return undefined;
    }
    match = findProperty(current, segments[i]);
    if (!match) {
      return undefined;
    }
    current = match.type ? getTypeSchema(match.type, schema) : undefined;
  }
  return match?.element;
}

const summaryCache = new WeakMap<FhirSchema, Map<string, Set<string>>>();

/**
 * JSON property names of a resource type's summary elements (isSummary in the base definition),
 * for `_summary=true` (hl7.org/fhir/R4/search.html#summary). Choice elements are listed by
 * every typed name ('value[x]' gives valueQuantity, valueString...). 'resourceType' is not an
 * element and is not listed.
 */
export function getSummaryElements(resourceType: string, schema: FhirSchema = getSchema()): Set<string> {
  let byType = summaryCache.get(schema);
  if (!byType) {
    byType = new Map();
    summaryCache.set(schema, byType);
  }
  let names = byType.get(resourceType);
  if (!names) {
    names = new Set();
    for (const [name, el] of Object.entries(getTypeSchema(resourceType, schema)?.elements ?? {})) {
      if (!el.isSummary) {
        continue;
      }
      if (name.endsWith('[x]')) {
        el.type.forEach((t) => names!.add(choiceName(name, t.code)));
      } else {
        names.add(name);
      }
    }
    byType.set(resourceType, names);
  }
  return names;
}

/** The specification's OperationDefinition of this id (`ValueSet-expand`), if R4 defines one. */
export function getOperationDefinition(
  id: string,
  schema: FhirSchema = getSchema(),
): OperationDefinitionJson | undefined {
  return Object.hasOwn(schema.operations, id) ? schema.operations[id] : undefined;
}
