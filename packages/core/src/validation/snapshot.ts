/**
 * Snapshots of profiles (hl7.org/fhir/R4/profiling.html#snapshot): a StructureDefinition that
 * carries only a differential gets its elements completed from its base, either the base
 * profile's snapshot or the core type in the validator's type schema (min, max, types and
 * binding of the element it constrains). The result lists every element the profile or one of
 * its base profiles says something about, each complete; elements nobody constrained are left to
 * the base type, which the structural validator checks anyway.
 */
import type { ProfileDefinition, ProfileElement, ValidatorElement, ValidatorSchema, ValidatorType } from './schema.js';

export type { ProfileDefinition, ProfileElement } from './schema.js';

export const CORE_PREFIX = 'http://hl7.org/fhir/StructureDefinition/';

/** The core type a canonical names ('http://hl7.org/fhir/StructureDefinition/Patient' → 'Patient'). */
export function coreTypeOf(url: string | undefined, schema: ValidatorSchema): string | undefined {
  if (!url?.startsWith(CORE_PREFIX)) {
    return undefined;
  }
  const name = url.slice(CORE_PREFIX.length).split('|')[0];
  return Object.hasOwn(schema.types, name) ? name : undefined;
}

/**
 * The id of an element: given, or its path with the slice names met so far
 * ('Patient.identifier' after a slice 'mrn' of it: 'Patient.identifier:mrn.system').
 */
function elementIds(elements: ProfileElement[]): string[] {
  const slices = new Map<string, string>(); // path -> id of the slice last opened on it
  return elements.map((el) => {
    if (el.id) {
      return el.id;
    }
    let id = el.path;
    for (const [path, sliceId] of slices) {
      if (el.path.startsWith(path + '.')) {
        id = sliceId + el.path.slice(path.length);
      }
    }
    if (el.sliceName) {
      id = `${el.path}:${el.sliceName}`;
      slices.set(el.path, id);
    }
    return id;
  });
}

/** 'Patient.identifier:mrn.system' → 'Patient.identifier.system' (slices removed). */
export function unslicedPath(id: string): string {
  return id
    .split('.')
    .map((s) => s.split(':')[0])
    .join('.');
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/**
 * The base type schema's definition of a path ('Observation.valueQuantity.code',
 * 'Patient.contact.name'), following data types, backbone types and typed choice names.
 */
export function schemaElement(path: string, schema: ValidatorSchema): ValidatorElement | undefined {
  const [root, ...segments] = path.split('.');
  let typeName: string | undefined = root;
  let element: ValidatorElement | undefined;
  for (const segment of segments) {
    const type: ValidatorType | undefined =
      typeName && Object.hasOwn(schema.types, typeName) ? schema.types[typeName] : undefined;
    if (!type) {
      return undefined;
    }
    element = Object.hasOwn(type.elements, segment) ? type.elements[segment] : undefined;
    let chosen: string | undefined = element?.type.length === 1 ? element.type[0].code : undefined;
    if (!element) {
      // A typed choice name (valueQuantity) or value[x] written for its one type.
      for (const [name, el] of Object.entries<ValidatorElement>(type.elements)) {
        if (name.endsWith('[x]') && segment.startsWith(name.slice(0, -3))) {
          const suffix = segment.slice(name.length - 3);
          const t = el.type.find((x) => x.code === suffix || x.code === lowerFirst(suffix));
          if (t) {
            element = { ...el, type: [t] };
            chosen = t.code;
            break;
          }
        }
      }
    }
    if (!element) {
      return undefined;
    }
    const contentReference: string | undefined = (element as { contentReference?: string }).contentReference;
    typeName = contentReference ? contentReference.slice(contentReference.indexOf('#') + 1) : chosen;
  }
  return element;
}

/** The base definition of one element from the type schema, as ElementDefinition fields. */
function fromSchema(path: string, schema: ValidatorSchema): Partial<ProfileElement> {
  const base = schemaElement(path, schema);
  if (!base) {
    return {};
  }
  const out: Partial<ProfileElement> = {
    min: base.min,
    max: base.max,
    type: base.type.map((t) => ({ code: t.code.includes('.') ? 'BackboneElement' : t.code, ...pickTarget(t) })),
  };
  if (base.binding) {
    out.binding = { ...base.binding };
  }
  return out;
}

function pickTarget(t: { targetProfile?: string[] }): { targetProfile?: string[] } {
  return t.targetProfile ? { targetProfile: t.targetProfile } : {};
}

/**
 * The snapshot elements of a profile. `baseSnapshot` is the base profile's (when the profile
 * derives from another profile); without it the base is the core type in `schema`.
 */
export function snapshotElements(
  definition: ProfileDefinition,
  schema: ValidatorSchema,
  baseSnapshot?: ProfileElement[],
): ProfileElement[] {
  const given = definition.snapshot?.element;
  if (given && given.length > 0) {
    const ids = elementIds(given);
    return given.map((el, i) => ({ ...el, id: ids[i] }));
  }
  const differential = definition.differential?.element ?? [];
  const result = new Map<string, ProfileElement>();
  for (const el of baseSnapshot ?? []) {
    result.set(el.id ?? el.path, el);
  }
  const ids = elementIds(differential);
  differential.forEach((el, i) => {
    const id = ids[i];
    const inherited = result.get(id);
    // A new slice, or an element inside one, starts from the unsliced element's definition.
    const base = inherited ?? result.get(unslicedPath(id)) ?? (fromSchema(unslicedPath(id), schema) as ProfileElement);
    const merged: ProfileElement = { ...stripSlicing(base, inherited !== undefined), ...el, id };
    if (el.sliceName === undefined && inherited === undefined) {
      delete merged.sliceName;
    }
    result.set(id, merged);
  });
  const rootId = definition.type;
  if (!result.has(rootId)) {
    result.set(rootId, { id: rootId, path: rootId, min: 0, max: '*' });
  }
  return [...result.values()];
}

/** A slice copies the sliced element's definition but not its slicing (nor its slice name). */
function stripSlicing(base: ProfileElement, same: boolean): ProfileElement {
  if (same) {
    return base;
  }
  const { slicing: _slicing, sliceName: _sliceName, ...rest } = base;
  return rest as ProfileElement;
}
