/**
 * A profile's snapshot elements as a tree the validator walks beside the resource: one node per
 * element (by element name, 'identifier', 'value[x]', 'valueQuantity'), slices under the element
 * they slice, each with what it demands: cardinality, fixed and pattern values, types (with
 * their profiles and reference targets), binding, maxLength, slicing and the invariants the
 * profile adds.
 */
import { InvariantChecker } from './invariants.js';
import type { ValidatorConstraint } from './schema.js';
import type { ProfileElement } from './snapshot.js';

export type SlicingRules = 'open' | 'closed' | 'openAtEnd';

export interface Discriminator {
  type: 'value' | 'pattern' | 'type' | 'profile' | 'exists';
  path: string;
}

export interface AllowedType {
  code: string;
  /** Profiles the value must conform to (one of them). */
  profiles: string[];
  /** For Reference and canonical: the profiles of allowed targets. */
  targetProfiles: string[];
}

export interface ProfileNode {
  id: string;
  /** The element's name in its parent ('identifier', 'value[x]', 'valueQuantity'). */
  name: string;
  sliceName?: string;
  min: number;
  max: number;
  /** Declared by an element of the profile; false for a node only on the way to one. */
  declared: boolean;
  types?: AllowedType[];
  fixed?: { key: string; value: unknown };
  pattern?: { key: string; value: unknown };
  binding?: { strength: string; valueSet: string };
  maxLength?: number;
  slicing?: { discriminators: Discriminator[]; ordered: boolean; rules: SlicingRules };
  /** Invariants of the profile (vs-2…); those of the base definitions are left to the structural validator. */
  constraints?: ValidatorConstraint[];
  /** Whether the element or one of its slices must be present (min > 0): absent, it is still checked. */
  required: boolean;
  children: Map<string, ProfileNode>;
  slices: ProfileNode[];
}

const DISCRIMINATOR_TYPES = new Set(['value', 'pattern', 'type', 'profile', 'exists']);

function emptyNode(id: string, name: string, sliceName?: string): ProfileNode {
  return {
    id,
    name,
    sliceName,
    min: 0,
    max: Infinity,
    declared: false,
    required: false,
    children: new Map(),
    slices: [],
  };
}

/** An element id's steps: 'Patient.identifier:mrn.system' → ['Patient', 'identifier:mrn', 'system']. */
export function idSegments(id: string): string[] {
  return id.split('.');
}

/** Whether an invariant key is one of the base definitions' (ele-1, obs-6…), checked by the structural validator. */
export type BaseConstraint = (key: string) => boolean;

function applyElement(node: ProfileNode, el: ProfileElement, isBase: BaseConstraint): void {
  node.declared = true;
  if (typeof el.min === 'number') {
    node.min = el.min;
  }
  if (typeof el.max === 'string') {
    node.max = el.max === '*' ? Infinity : Number(el.max);
  }
  if (Array.isArray(el.type) && el.type.length > 0) {
    node.types = el.type.map((t) => ({
      code: t.code,
      profiles: t.profile ?? [],
      targetProfiles: t.targetProfile ?? [],
    }));
  }
  for (const key of Object.keys(el)) {
    if (key.startsWith('fixed') && key.length > 5) {
      node.fixed = { key, value: el[key] };
    } else if (key.startsWith('pattern') && key.length > 7) {
      node.pattern = { key, value: el[key] };
    }
  }
  if (el.binding?.valueSet) {
    node.binding = { strength: el.binding.strength, valueSet: el.binding.valueSet };
  }
  if (typeof el.maxLength === 'number') {
    node.maxLength = el.maxLength;
  }
  const own = (el.constraint ?? []).flatMap((c): ValidatorConstraint[] =>
    typeof c.expression === 'string' && !isBase(c.key)
      ? [
          {
            key: c.key,
            severity: c.severity === 'warning' ? 'warning' : 'error',
            human: c.human,
            expression: c.expression,
          },
        ]
      : [],
  );
  node.constraints = InvariantChecker.applicable(own);
  if (el.slicing) {
    const rules = el.slicing.rules === 'closed' || el.slicing.rules === 'openAtEnd' ? el.slicing.rules : 'open';
    node.slicing = {
      discriminators: (el.slicing.discriminator ?? []).filter((d): d is Discriminator =>
        DISCRIMINATOR_TYPES.has(d.type),
      ),
      ordered: el.slicing.ordered === true,
      rules,
    };
  }
}

/** Builds the tree of a profile's snapshot; the root is the element whose id is the type's name. */
export function buildProfileTree(
  elements: ProfileElement[],
  type: string,
  isBase: BaseConstraint = () => false,
): ProfileNode {
  const root = emptyNode(type, type);
  for (const el of elements) {
    const [first, ...rest] = idSegments(el.id ?? el.path);
    if (first.split(':')[0] !== type) {
      continue; // an element of another type: not part of this profile
    }
    let node = root;
    for (const segment of rest) {
      const colon = segment.indexOf(':');
      const name = colon < 0 ? segment : segment.slice(0, colon);
      let child = node.children.get(name);
      if (!child) {
        child = emptyNode(`${node.id}.${name}`, name);
        node.children.set(name, child);
      }
      node = child;
      if (colon >= 0) {
        const sliceName = segment.slice(colon + 1);
        let slice = node.slices.find((s) => s.sliceName === sliceName);
        if (!slice) {
          slice = emptyNode(`${node.id}:${sliceName}`, name, sliceName);
          node.slices.push(slice);
        }
        node = slice;
      }
    }
    applyElement(node, el, isBase);
  }
  defaultExtensionSlicing(root);
  dropRepeatedConstraints(root);
  markRequired(root);
  return root;
}

function markRequired(node: ProfileNode): void {
  node.required = node.min > 0 || node.slices.some((s) => s.min > 0);
  node.children.forEach(markRequired);
  node.slices.forEach(markRequired);
}

/**
 * A slice repeats the invariants of the element it slices (vs-3 on Observation.component and on
 * Observation.component:SystolicBP); the sliced element's are checked on every value already.
 */
function dropRepeatedConstraints(node: ProfileNode): void {
  for (const child of node.children.values()) {
    const keys = new Set((child.constraints ?? []).map((c) => c.key));
    for (const slice of child.slices) {
      const own = slice.constraints?.filter((c) => !keys.has(c.key));
      slice.constraints = own && own.length > 0 ? own : undefined;
      dropRepeatedConstraints(slice);
    }
    dropRepeatedConstraints(child);
  }
}

/**
 * Extensions are sliced by url in the base definitions (Element.extension, hl7.org/fhir/R4/
 * extensibility.html); a differential that adds extension slices often does not say so again.
 */
function defaultExtensionSlicing(node: ProfileNode): void {
  for (const child of node.children.values()) {
    if ((child.name === 'extension' || child.name === 'modifierExtension') && !child.slicing && child.slices.length) {
      child.slicing = { discriminators: [{ type: 'value', path: 'url' }], ordered: false, rules: 'open' };
    }
    defaultExtensionSlicing(child);
    child.slices.forEach(defaultExtensionSlicing);
  }
}
