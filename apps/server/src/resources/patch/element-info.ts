import { findProperty, getTypeSchema } from '@hearth/definitions';

/** What FHIRPath Patch needs to know about one element: does its JSON form repeat, and its types. */
export interface ElementInfo {
  isArray: boolean;
  /**
   * Type codes ('string', 'HumanName'); a backbone element's type is its path ('Patient.contact').
   * Several for a choice element.
   */
  types: string[];
  /** For an element defined elsewhere (Questionnaire.item.item): the path whose children it has. */
  contentReference?: string;
}

/**
 * A child element of a type or backbone element, from the type schema of @hearth/definitions
 * (R4 and platform types): elementInfo('Patient', 'name'), elementInfo('Patient.contact', 'name'),
 * elementInfo('Observation', 'value[x]').
 */
export function elementInfo(typePath: string, name: string): ElementInfo | undefined {
  const type = getTypeSchema(typePath);
  const el = type && Object.hasOwn(type.elements, name) ? type.elements[name] : undefined;
  if (!el) {
    return undefined;
  }
  return {
    isArray: el.isArray,
    types: el.type.map((t) => t.code),
    contentReference: el.contentReference?.replace(/^#/, ''),
  };
}

/** The type path of an element's value: its (chosen) type; backbone types are named by their path. */
export function childPathOf(_parentPath: string, _name: string, info: ElementInfo, chosenType?: string): string {
  return info.contentReference ?? chosenType ?? info.types[0];
}

/**
 * Resolves a JSON property name to its element: 'valueQuantity' is the choice element 'value[x]'
 * with type Quantity.
 */
export function resolveProperty(
  typePath: string,
  property: string,
): { name: string; info: ElementInfo; type?: string } | undefined {
  const type = getTypeSchema(typePath);
  const match = type ? findProperty(type, property) : undefined;
  if (!match) {
    return undefined;
  }
  const name = match.element.path.slice(match.element.path.lastIndexOf('.') + 1);
  const info = elementInfo(typePath, name);
  return info ? { name, info, type: match.type } : undefined;
}

const NUMBER_TYPES = new Set(['integer', 'positiveInt', 'unsignedInt', 'decimal', 'integer64']);

/** The JSON kind of a FHIR primitive type: numbers and booleans are not strings in JSON. */
export function primitiveJsonKind(type: string | undefined): 'number' | 'boolean' | 'string' | undefined {
  if (!type || type.includes('.')) {
    return undefined;
  }
  if (NUMBER_TYPES.has(type)) {
    return 'number';
  }
  if (type === 'boolean') {
    return 'boolean';
  }
  return /^[a-z]/.test(type) ? 'string' : undefined;
}
