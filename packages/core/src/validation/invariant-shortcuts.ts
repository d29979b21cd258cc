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

export const HOLDS_WITHOUT_EVALUATION: ReadonlyMap<string, (node: Json) => boolean> = new Map<
  string,
  (node: Json) => boolean
>([
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
]);
