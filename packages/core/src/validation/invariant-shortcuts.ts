/**
 * Invariants that certainly hold on a value, decided from its JSON without evaluating FHIRPath.
 * Evaluating an expression costs tens of microseconds (ref-1 alone, run on every Reference, was
 * over half of all validation of the Synthea set), while what each one below checks is absent
 * from most values. Keyed by the exact expression text (not the key), so that a constraint worded
 * differently (a profile's, another release's) is always evaluated. Each test returns true only
 * when the expression evaluates to true or to an empty collection (which holds: invariants.ts);
 * otherwise the expression is evaluated as before.
 */

type Json = Record<string, unknown>;

/** Absent, in FHIRPath's sense: neither the value nor its `_name` (id and extensions) element. */
const absent = (node: Json, name: string): boolean => node[name] === undefined && node[`_${name}`] === undefined;

/** A test of an object's properties (false, so evaluated, for any other value). */
const onObject =
  (test: (node: Json) => boolean) =>
  (node: unknown): boolean =>
    typeof node === 'object' && node !== null && !Array.isArray(node) && test(node as Json);

/** Some typed `value[x]` (valueQuantity, valueString…) is there. */
const hasValue = (node: Json): boolean => {
  for (const key in node) {
    const c = key.charCodeAt(5);
    if (c >= 65 && c <= 90 && key.startsWith('value') && node[key] !== undefined && node[key] !== null) {
      return true;
    }
  }
  return false;
};

const some = (value: unknown): boolean => Array.isArray(value) && value.length > 0;

/** Shortcuts on objects (resources, data types, backbone elements). */
const ON_OBJECTS: [string, (node: Json) => boolean][] = [
  // ref-1: with no reference, or one that does not start with '#', the first operand is true (or
  // the whole is empty).
  [
    "reference.startsWith('#').not() or (reference.substring(1).trace('url') in %rootResource.contained.id.trace('ids'))",
    (node) => typeof node.reference !== 'string' || !node.reference.startsWith('#'),
  ],
  // dom-2, dom-4, dom-5 (on every resource): without contained resources each path is empty.
  ['contained.contained.empty()', (node) => node.contained === undefined],
  ['contained.meta.versionId.empty() and contained.meta.lastUpdated.empty()', (node) => node.contained === undefined],
  ['contained.meta.security.empty()', (node) => node.contained === undefined],
  // per-1: a start or an end without a value makes `x.hasValue().not()` true.
  [
    'start.hasValue().not() or end.hasValue().not() or (start <= end)',
    (node) => node.start === undefined || node.end === undefined,
  ],
  // qty-3: no code at all, or a system.
  ['code.empty() or system.exists()', (node) => absent(node, 'code') || typeof node.system === 'string'],
  // att-1: no data at all, or a contentType.
  ['data.empty() or contentType.exists()', (node) => absent(node, 'data') || typeof node.contentType === 'string'],
  // obs-6: no dataAbsentReason.
  ['dataAbsentReason.empty() or value.empty()', (node) => node.dataAbsentReason === undefined],
  // obs-7: no component, so the where() is empty.
  [
    'value.empty() or component.code.where(coding.intersect(%resource.code.coding).exists()).empty()',
    (node) => node.component === undefined,
  ],
  // The vital signs profiles' (hl7.org/fhir/R4/observation-vitalsigns.html: required-profiles.ts).
  // vs-2: a component, a member, a dataAbsentReason or a value.
  [
    '(component.empty() and hasMember.empty()) implies (dataAbsentReason.exists() or value.exists())',
    (node) => some(node.component) || some(node.hasMember) || node.dataAbsentReason !== undefined || hasValue(node),
  ],
  // vs-3: a component with a dataAbsentReason or a value.
  ['value.exists() or dataAbsentReason.exists()', (node) => node.dataAbsentReason !== undefined || hasValue(node)],
];

export const HOLDS_WITHOUT_EVALUATION: ReadonlyMap<string, (node: unknown) => boolean> = new Map([
  ...ON_OBJECTS.map(([expression, test]): [string, (node: unknown) => boolean] => [expression, onObject(test)]),
  // vs-1 (on a vital sign's effective[x]): a dateTime of 8 characters or more is precise to the
  // day; a Period is no dateTime (`$this as dateTime` is empty).
  ['($this as dateTime).toString().length() >= 8', (node) => typeof node !== 'string' || node.length >= 8],
]);
