/**
 * Profiles (constraint StructureDefinitions, hl7.org/fhir/R4/profiling.html) kept in the schema
 * for the validator: their snapshots trimmed to what profile validation reads (cardinality,
 * types, fixed and pattern values, bindings, slicing, maxLength, the invariants the profile adds),
 * and the expansions of the value sets their required bindings name.
 */
import type { ElementDefinitionJson, StructureDefinitionJson } from './convert.js';
import type { ProfileElementSchema, ProfileSchema, TypeSchema } from './types.js';
import type { ValueSetExpander } from './valuesets.js';

export interface TrimOptions {
  /** Invariant keys of the base definitions (ele-1, dom-2…): the structural validator checks them, so they are left out. */
  baseConstraints: Set<string>;
  /** Elements (by id) whose binding is read as extensible: a correction, explained by the caller. */
  extensible?: Set<string>;
}

const KEPT = new Set(['id', 'path', 'sliceName', 'min', 'max', 'slicing', 'maxLength']);

function trimElement(el: ElementDefinitionJson & Record<string, unknown>, options: TrimOptions): ProfileElementSchema {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(el)) {
    if (KEPT.has(key) || key.startsWith('fixed') || key.startsWith('pattern')) {
      out[key] = value;
    }
  }
  if (el.type) {
    out.type = el.type.map(({ code, profile, targetProfile }) => ({
      code,
      ...(profile ? { profile } : {}),
      ...(targetProfile ? { targetProfile } : {}),
    }));
  }
  if (el.binding) {
    const strength = options.extensible?.has(el.id ?? el.path) ? 'extensible' : el.binding.strength;
    out.binding = { strength, ...(el.binding.valueSet ? { valueSet: el.binding.valueSet } : {}) };
  }
  const own = (el.constraint ?? []).filter((c) => !options.baseConstraints.has(c.key));
  if (own.length > 0) {
    out.constraint = own.map(({ key, severity, human, expression }) => ({ key, severity, human, expression }));
  }
  return out as ProfileElementSchema;
}

/** A profile with its snapshot trimmed. */
export function trimProfile(sd: StructureDefinitionJson, options: TrimOptions): ProfileSchema {
  return {
    resourceType: 'StructureDefinition',
    url: sd.url,
    name: sd.name,
    type: sd.type,
    kind: sd.kind,
    derivation: sd.derivation,
    baseDefinition: sd.baseDefinition,
    snapshot: {
      element: (sd.snapshot?.element ?? []).map((el) =>
        trimElement(el as ElementDefinitionJson & Record<string, unknown>, options),
      ),
    },
  };
}

/** The invariant keys the types' definitions declare. */
export function baseConstraintKeys(types: Record<string, TypeSchema>): Set<string> {
  const keys = new Set<string>();
  for (const type of Object.values(types)) {
    type.constraint?.forEach((c) => keys.add(c.key));
    for (const el of Object.values(type.elements)) {
      el.constraint?.forEach((c) => keys.add(c.key));
    }
  }
  return keys;
}

/** Adds to `out` the expansions of the value sets the profiles' required bindings name (when enumerable). */
export function expandProfileBindings(
  profiles: ProfileSchema[],
  expander: ValueSetExpander,
  out: Record<string, string[]>,
): void {
  for (const profile of profiles) {
    for (const el of profile.snapshot.element) {
      const vs = el.binding?.strength === 'required' ? el.binding.valueSet?.split('|')[0] : undefined;
      if (vs && !Object.hasOwn(out, vs)) {
        const codes = expander.expand(vs);
        if (codes) {
          out[vs] = codes;
        }
      }
    }
  }
}
