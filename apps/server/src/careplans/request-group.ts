// The RequestGroup of an applied PlanDefinition (hl7.org/fhir/R4/plandefinition.html#12.23.3.3 and
// requestgroup.html): when a definition groups its actions (an action with nested actions) or
// states how they relate (grouping, selection, required, precheck or cardinality behavior), the
// result keeps that structure as a RequestGroup whose actions mirror the applicable actions and
// whose leaves reference the resources created for them. Free of HTTP and storage.

type Json = Record<string, unknown>;

/** The action behaviors R4 carries from PlanDefinition.action to RequestGroup.action as they are. */
export const BEHAVIORS = [
  'groupingBehavior',
  'selectionBehavior',
  'requiredBehavior',
  'precheckBehavior',
  'cardinalityBehavior',
] as const;

/** Selection behaviors under which the actions of a group are alternatives to choose among. */
const CHOICES = new Set(['any', 'exactly-one', 'at-most-one', 'one-or-more']);

/** Whether the group's actions are options to choose from (R4 action-selection-behavior), not all to do. */
export function isChoice(action: Json): boolean {
  return CHOICES.has(action.selectionBehavior as string);
}

/** An applicable action of the definition: a leaf that becomes a Task, or a group of them. */
export type PlannedAction =
  { kind: 'task'; action: Json; task: Json } | { kind: 'group'; action: Json; children: PlannedAction[] };

/** The leaves, depth first (the order Tasks are written in). */
export function plannedLeaves(planned: PlannedAction[]): Extract<PlannedAction, { kind: 'task' }>[] {
  return planned.flatMap((p) => (p.kind === 'task' ? [p] : plannedLeaves(p.children)));
}

/** Whether the applied definition calls for a RequestGroup: it has a group, or an action states a behavior. */
export function needsRequestGroup(planned: PlannedAction[]): boolean {
  return planned.some((p) => p.kind === 'group' || BEHAVIORS.some((b) => p.action[b] !== undefined));
}

const COPIED = [
  'prefix',
  'title',
  'description',
  'textEquivalent',
  'priority',
  'code',
  'documentation',
  'type',
  'timingDateTime',
  'timingDuration',
  'timingTiming',
  ...BEHAVIORS,
] as const;

function groupAction(planned: PlannedAction, references: Map<Json, string>): Json {
  const out: Json = {};
  for (const key of COPIED) {
    if (planned.action[key] !== undefined) out[key] = planned.action[key];
  }
  if (planned.kind === 'task') {
    out.resource = { reference: references.get(planned.task) as string };
  } else {
    out.action = planned.children.map((c) => groupAction(c, references));
  }
  return out;
}

/**
 * The RequestGroup: status active, intent plan, the definition as instantiatesCanonical, the
 * CarePlan as basedOn, and one action per applicable action, its leaves pointing at their Tasks.
 */
export function buildRequestGroup(input: {
  planned: PlannedAction[];
  /** The reference of each leaf's Task, keyed by the planned task object. */
  references: Map<Json, string>;
  subject: string;
  encounter?: string;
  author?: { reference: string };
  canonical?: string;
  carePlan: string;
  now: Date;
}): Json {
  const group: Json = {
    resourceType: 'RequestGroup',
    status: 'active',
    intent: 'plan',
    instantiatesCanonical: input.canonical ? [input.canonical] : undefined,
    basedOn: [{ reference: input.carePlan }],
    subject: { reference: input.subject },
    encounter: input.encounter ? { reference: input.encounter } : undefined,
    authoredOn: input.now.toISOString(),
    author: input.author,
    action: input.planned.map((p) => groupAction(p, input.references)),
  };
  return Object.fromEntries(Object.entries(group).filter(([, v]) => v !== undefined));
}
