/**
 * StructureDefinition -> compact TypeSchema conversion (hl7.org/fhir/R4/elementdefinition.html).
 * One StructureDefinition yields its own type plus one 'backbone' type per nested element that
 * has children (BackboneElement, or Element inside data types such as Timing.repeat).
 */
import type { ConstraintSchema, ElementSchema, ElementType, TypeKind, TypeSchema } from './types.js';

export interface ElementDefinitionJson {
  id?: string;
  path: string;
  min?: number;
  max?: string;
  base?: { path: string; min: number; max: string };
  type?: {
    code: string;
    targetProfile?: string[];
    profile?: string[];
    extension?: { url: string; valueUrl?: string; valueUri?: string }[];
  }[];
  contentReference?: string;
  isSummary?: boolean;
  isModifier?: boolean;
  binding?: { strength: ElementBindingStrength; valueSet?: string };
  constraint?: { key: string; severity: string; human: string; expression?: string; source?: string }[];
}

type ElementBindingStrength = 'required' | 'extensible' | 'preferred' | 'example';

export interface StructureDefinitionJson {
  resourceType: 'StructureDefinition';
  url: string;
  name: string;
  type: string;
  kind: TypeKind;
  abstract?: boolean;
  derivation?: 'specialization' | 'constraint';
  baseDefinition?: string;
  snapshot?: { element: ElementDefinitionJson[] };
  differential?: { element: ElementDefinitionJson[] };
}

const FHIR_TYPE_EXTENSION = 'http://hl7.org/fhir/StructureDefinition/structuredefinition-fhir-type';

/** FHIRPath system types used for Element.id, Extension.url and Resource.id in the R4 snapshots. */
const SYSTEM_TYPES: Record<string, string> = {
  'http://hl7.org/fhirpath/System.String': 'string',
  'http://hl7.org/fhirpath/System.Boolean': 'boolean',
  'http://hl7.org/fhirpath/System.Integer': 'integer',
  'http://hl7.org/fhirpath/System.Decimal': 'decimal',
  'http://hl7.org/fhirpath/System.Date': 'date',
  'http://hl7.org/fhirpath/System.DateTime': 'dateTime',
  'http://hl7.org/fhirpath/System.Time': 'time',
};

/** True for a definition that introduces a type (not a profile constraining one). */
export function isTypeDefinition(sd: StructureDefinitionJson): boolean {
  return sd.derivation !== 'constraint';
}

export function baseTypeName(sd: StructureDefinitionJson): string | undefined {
  return sd.baseDefinition?.split('/').pop();
}

function stripVersion(url: string): string {
  const bar = url.indexOf('|');
  return bar < 0 ? url : url.slice(0, bar);
}

function convertType(t: NonNullable<ElementDefinitionJson['type']>[number]): ElementType {
  let code = t.code;
  if (code.startsWith('http://hl7.org/fhirpath/System.')) {
    const ext = t.extension?.find((e) => e.url === FHIR_TYPE_EXTENSION);
    code = ext?.valueUrl ?? ext?.valueUri ?? SYSTEM_TYPES[code] ?? 'string';
  }
  const out: ElementType = { code };
  if (t.targetProfile?.length) {
    out.targetProfile = [...t.targetProfile];
  }
  if (t.profile?.length) {
    out.profile = [...t.profile];
  }
  return out;
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1);
}

function parentPath(path: string): string {
  return path.slice(0, path.lastIndexOf('.'));
}

/**
 * The invariants an element definition adds itself: those with another definition as their
 * `source` (ele-1 of Element, ext-1 of Extension, dom-* of DomainResource copied into every
 * snapshot) belong to that definition's type and are kept there once.
 */
export function ownConstraints(el: ElementDefinitionJson, url?: string): ConstraintSchema[] | undefined {
  const own = (el.constraint ?? []).filter((c) => c.expression && (!c.source || c.source === url));
  if (own.length === 0) {
    return undefined;
  }
  return own.map((c) => ({
    key: c.key,
    severity: c.severity === 'warning' ? 'warning' : 'error',
    human: c.human,
    expression: c.expression as string,
  }));
}

/** The compact form of one element; `backbone` is the name of the nested type it introduces, if any. */
export function convertElement(el: ElementDefinitionJson, backbone?: string, url?: string): ElementSchema {
  const max = el.max ?? '1';
  const baseMax = el.base?.max ?? max;
  const out: ElementSchema = {
    path: el.path,
    min: el.min ?? 0,
    max,
    isArray: baseMax === '*' || Number(baseMax) > 1,
    type: [],
  };
  if (el.contentReference) {
    out.contentReference = el.contentReference;
    out.type = [{ code: el.contentReference.slice(el.contentReference.indexOf('#') + 1) }];
  } else if (backbone) {
    out.type = [{ code: backbone }];
  } else {
    out.type = (el.type ?? []).map(convertType);
    if (el.base?.path === 'Resource.id') {
      // The R4 snapshots type Resource.id as System.String (fhir-type 'string'); the spec says id.
      out.type = [{ code: 'id' }];
    }
  }
  if (el.isSummary) {
    out.isSummary = true;
  }
  if (el.isModifier) {
    out.isModifier = true;
  }
  if (el.binding?.valueSet) {
    out.binding = { strength: el.binding.strength, valueSet: stripVersion(el.binding.valueSet) };
  }
  const constraint = ownConstraints(el, url);
  if (constraint) {
    out.constraint = constraint;
  }
  return out;
}

/**
 * Converts a list of element definitions rooted at `rootName` (snapshot order: a parent comes
 * before its children) into TypeSchemas. `types` receives the root type and every backbone type.
 */
export function convertElements(
  root: TypeSchema,
  elements: ElementDefinitionJson[],
  types: Record<string, TypeSchema>,
): void {
  types[root.name] = root;
  const owners = new Map<string, TypeSchema>([[root.name, root]]);
  // Elements of a definition start with the type name: 'Patient.contact.name'. A platform
  // differential may re-declare nothing but its own elements, in any order after its parent.
  for (let i = 0; i < elements.length; i++) {
    const el = elements[i];
    if (el.path === root.name || !el.path.includes('.')) {
      continue;
    }
    const parent = parentPath(el.path);
    const owner = owners.get(parent);
    if (!owner) {
      throw new Error(`Element ${el.path} comes before its parent ${parent}`);
    }
    const codes = el.type?.map((t) => t.code) ?? [];
    const prefix = el.path + '.';
    const hasChildren = elements.some((e) => e.path.startsWith(prefix));
    let backbone: string | undefined;
    if (!el.contentReference && hasChildren && (codes[0] === 'BackboneElement' || codes[0] === 'Element')) {
      backbone = el.path;
      const nested: TypeSchema = { name: backbone, kind: 'backbone', base: codes[0], elements: {} };
      if (root.platform) {
        nested.platform = true;
      }
      // A differential lists only new children; id, extension and modifierExtension come from the
      // base type (a snapshot lists them again, and those copies then replace these).
      const baseType = types[codes[0]];
      for (const [name, inherited] of Object.entries(baseType?.elements ?? {})) {
        nested.elements[name] = { ...inherited, path: `${backbone}.${name}` };
      }
      types[backbone] = nested;
      owners.set(backbone, nested);
    }
    owner.elements[lastSegment(el.path)] = convertElement(el, backbone, root.url);
  }
}

/** Converts one StructureDefinition with a snapshot into `types`. */
export function convertStructureDefinition(sd: StructureDefinitionJson, types: Record<string, TypeSchema>): void {
  const root: TypeSchema = { name: sd.type, kind: sd.kind, elements: {} };
  const base = baseTypeName(sd);
  if (base) {
    root.base = base;
  }
  if (sd.abstract) {
    root.abstract = true;
  }
  root.url = sd.url;
  let elements = sd.snapshot?.element ?? [];
  const rootConstraints = elements[0]?.path === sd.type ? ownConstraints(elements[0], sd.url) : undefined;
  if (rootConstraints) {
    root.constraint = rootConstraints;
  }
  if (sd.kind === 'primitive-type') {
    // The primitive's own 'value' is the JSON value itself; only id and extension remain (for `_x`).
    elements = elements.filter((e) => e.path !== `${sd.type}.value`);
  }
  convertElements(root, elements, types);
}

/**
 * Builds a type from a differential over an already converted base type: the base's elements
 * are copied under the new name (what a snapshot generator does for a specialization), then
 * the differential's elements are added.
 */
export function convertDifferential(
  sd: StructureDefinitionJson,
  types: Record<string, TypeSchema>,
  extra: Partial<TypeSchema> = {},
): void {
  const baseName = baseTypeName(sd);
  const base = baseName ? types[baseName] : undefined;
  if (!base) {
    throw new Error(`Base type ${baseName} of ${sd.name} is not defined`);
  }
  const root: TypeSchema = { name: sd.type, kind: sd.kind, base: base.name, url: sd.url, ...extra, elements: {} };
  for (const [name, el] of Object.entries(base.elements)) {
    root.elements[name] = { ...el, path: sd.type + el.path.slice(base.name.length) };
  }
  convertElements(root, sd.differential?.element ?? [], types);
}
