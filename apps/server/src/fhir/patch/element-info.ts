import { readR4File } from '@hearth/definitions';

/** What FHIRPath Patch needs to know about one element: does its JSON form repeat, and its types. */
export interface ElementInfo {
  isArray: boolean;
  /** Type codes ('string', 'HumanName', 'BackboneElement'); several for a choice element. */
  types: string[];
  /** For an element defined elsewhere (Questionnaire.item.item): the path whose children it has. */
  contentReference?: string;
}

interface SdElement {
  path: string;
  max?: string;
  base?: { max?: string };
  type?: { code: string; extension?: { url: string; valueUrl?: string }[] }[];
  contentReference?: string;
}

interface SdBundle {
  entry: { resource: { resourceType: string; kind?: string; snapshot?: { element: SdElement[] } } }[];
}

const FHIR_TYPE_EXT = 'http://hl7.org/fhir/StructureDefinition/structuredefinition-fhir-type';

let index: Map<string, ElementInfo> | undefined;

/** Element paths of the R4 resources and data types ('Patient.contact.name', 'HumanName.given'). */
function elementIndex(): Map<string, ElementInfo> {
  if (index) {
    return index;
  }
  const map = new Map<string, ElementInfo>();
  for (const file of ['profiles-types.json', 'profiles-resources.json']) {
    for (const { resource } of readR4File<SdBundle>(file).entry) {
      if (resource.resourceType !== 'StructureDefinition' || !resource.snapshot) {
        continue;
      }
      for (const el of resource.snapshot.element) {
        if (!el.path.includes('.')) {
          continue;
        }
        // Cardinality of the JSON form follows the base definition (hl7.org/fhir/R4/json.html#arrays).
        const max = el.base?.max ?? el.max ?? '1';
        const types = (el.type ?? []).map(
          (t) => t.extension?.find((e) => e.url === FHIR_TYPE_EXT)?.valueUrl ?? t.code.replace(/^.*System\./, ''),
        );
        if (!map.has(el.path)) {
          map.set(el.path, {
            isArray: max !== '0' && max !== '1',
            types,
            contentReference: el.contentReference?.replace(/^#/, ''),
          });
        }
      }
    }
  }
  index = map;
  return map;
}

/**
 * Looks up a child element of a type or backbone path: elementInfo('Patient', 'name'),
 * elementInfo('Patient.contact', 'name'), elementInfo('Observation', 'value[x]').
 * Elements inherited from Element/Resource/DomainResource are found through their base types.
 */
export function elementInfo(typePath: string, name: string): ElementInfo | undefined {
  const map = elementIndex();
  const direct = map.get(`${typePath}.${name}`);
  if (direct) {
    return direct;
  }
  for (const base of ['DomainResource', 'Resource', 'BackboneElement', 'Element']) {
    const inherited = map.get(`${base}.${name}`);
    if (inherited) {
      return inherited;
    }
  }
  return undefined;
}

/** The path whose children an element has: its type for complex types, itself for backbone elements. */
export function childPathOf(parentPath: string, name: string, info: ElementInfo, chosenType?: string): string {
  if (info.contentReference) {
    return info.contentReference;
  }
  const type = chosenType ?? info.types[0];
  if (type === 'BackboneElement' || type === 'Element') {
    return `${parentPath}.${name}`;
  }
  return type;
}

/**
 * Resolves a JSON property name to its element: 'valueQuantity' is the choice element 'value[x]'
 * with type Quantity.
 */
export function resolveProperty(
  typePath: string,
  property: string,
): { name: string; info: ElementInfo; type?: string } | undefined {
  const info = elementInfo(typePath, property);
  if (info) {
    return { name: property, info, type: info.types.length === 1 ? info.types[0] : undefined };
  }
  for (let i = property.length - 1; i > 0; i--) {
    if (property[i] >= 'A' && property[i] <= 'Z') {
      const choice = elementInfo(typePath, `${property.slice(0, i)}[x]`);
      if (choice) {
        const suffix = property.slice(i);
        const type = choice.types.find((t) => t.toLowerCase() === suffix.toLowerCase());
        if (type) {
          return { name: `${property.slice(0, i)}[x]`, info: choice, type };
        }
      }
    }
  }
  return undefined;
}

const NUMBER_TYPES = new Set(['integer', 'positiveInt', 'unsignedInt', 'decimal', 'integer64']);

/** The JSON kind of a FHIR primitive type: numbers and booleans are not strings in JSON. */
export function primitiveJsonKind(type: string): 'number' | 'boolean' | 'string' | undefined {
  if (NUMBER_TYPES.has(type)) {
    return 'number';
  }
  if (type === 'boolean') {
    return 'boolean';
  }
  return /^[a-z]/.test(type) ? 'string' : undefined;
}
