// PlanDefinition/$apply (hl7.org/fhir/R4/plandefinition-operation-apply.html): instantiates a
// PlanDefinition for one patient as a CarePlan with its Goals and one Task per action (and a
// RequestGroup holding grouped actions, see request-group.ts), all written in one transaction
// through the caller's repository (so access policies apply). Free of HTTP.
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import { badRequest, fail, unprocessable, type Resource } from '@hearth/core';
import { standardDefinition } from '../operations/definitions/standard.js';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { Repository } from '../storage/repository.js';
import { applyParameters, REFERENCE, type ApplyParameters, type Reference } from './parameters.js';
import { buildRequestGroup, isChoice, needsRequestGroup, plannedLeaves, type PlannedAction } from './request-group.js';

type Json = Record<string, unknown>;

const UNITS_MS: Record<string, number> = {
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  wk: 7 * 86_400_000,
  mo: 30 * 86_400_000,
  a: 365 * 86_400_000,
};

/** A Duration as milliseconds, or a 422 naming the element. */
function durationMs(d: Json, where: string): number {
  const unit = (d.code ?? d.unit) as string | undefined;
  const value = d.value;
  if (typeof value !== 'number' || !unit || !(unit in UNITS_MS)) {
    fail(unprocessable(`${where} must have a value and a UCUM unit among ${Object.keys(UNITS_MS).join(', ')}`, where));
  }
  return value * UNITS_MS[unit];
}

/** When the action is due, from timingDuration or timingTiming (repeat.boundsDuration / first event) relative to now. */
export function dueDate(action: Json, where: string, now: Date): string | undefined {
  if (action.timingDuration)
    return new Date(now.getTime() + durationMs(action.timingDuration as Json, `${where}.timingDuration`)).toISOString();
  if (action.timingDateTime) return action.timingDateTime as string;
  if (action.timingTiming) {
    const timing = action.timingTiming as Json;
    const events = timing.event as string[] | undefined;
    if (events?.length) return events[0];
    const repeat = timing.repeat as Json | undefined;
    if (repeat?.boundsDuration) {
      return new Date(
        now.getTime() + durationMs(repeat.boundsDuration as Json, `${where}.timingTiming.repeat.boundsDuration`),
      ).toISOString();
    }
    if (repeat?.period !== undefined && repeat.periodUnit) {
      return new Date(
        now.getTime() + durationMs({ value: repeat.period, code: repeat.periodUnit }, `${where}.timingTiming.repeat`),
      ).toISOString();
    }
    fail(
      unprocessable(
        `${where}.timingTiming: Hearth takes event, repeat.boundsDuration or repeat.period`,
        `${where}.timingTiming`,
      ),
    );
  }
  for (const key of Object.keys(action)) {
    if (key.startsWith('timing')) {
      fail(
        unprocessable(
          `${where}.${key} is not supported (use timingDuration, timingDateTime or timingTiming)`,
          `${where}.${key}`,
        ),
      );
    }
  }
  return undefined;
}

/** Evaluates an applicability condition (FHIRPath, with %patient and %subject); a non-boolean result is a 422. */
function applies(action: Json, where: string, patient: Resource): boolean {
  const conditions = (action.condition as Json[] | undefined) ?? [];
  for (const [i, c] of conditions.entries()) {
    const at = `${where}.condition[${i}]`;
    if (c.kind !== 'applicability') {
      fail(unprocessable(`${at}: only applicability conditions are supported (kind ${String(c.kind)})`, at));
    }
    const expr = c.expression as Json | undefined;
    if (!expr || expr.language !== 'text/fhirpath' || typeof expr.expression !== 'string') {
      fail(unprocessable(`${at}.expression: only text/fhirpath expressions are supported`, `${at}.expression`));
    }
    let result: unknown[];
    try {
      result = fhirpath.evaluate(patient, expr.expression, { patient, subject: patient }, r4Model) as unknown[];
    } catch (e) {
      fail(unprocessable(`${at}.expression: ${(e as Error).message}`, `${at}.expression`));
    }
    if (result.length === 0) return false;
    if (result.length !== 1 || typeof result[0] !== 'boolean') {
      fail(unprocessable(`${at}.expression does not evaluate to one boolean`, `${at}.expression`));
    }
    if (!result[0]) return false;
  }
  return true;
}

const UNSUPPORTED_ACTION = [
  'dynamicValue',
  'definitionCanonical',
  'definitionUri',
  'transform',
  'relatedAction',
  'input',
  'output',
] as const;

/**
 * The applicable actions, in the definition's order: each leaf with the Task it becomes, each group
 * with its applicable children (a group left with none is dropped). A leaf of a group whose
 * selectionBehavior makes its actions alternatives is an option (Task.intent option), not an order.
 */
function plannedActions(
  actions: Json[],
  path: string,
  ctx: { patient: Resource; params: ApplyParameters; now: Date; requester?: Reference },
  choice = false,
): PlannedAction[] {
  const out: PlannedAction[] = [];
  for (const [i, action] of actions.entries()) {
    const where = `${path}[${i}]`;
    for (const key of UNSUPPORTED_ACTION) {
      if (action[key] !== undefined) {
        fail(unprocessable(`${where}.${key} is not supported by Hearth's $apply`, `${where}.${key}`));
      }
    }
    if (!applies(action, where, ctx.patient)) continue;
    const nested = action.action as Json[] | undefined;
    if (nested?.length) {
      const children = plannedActions(nested, `${where}.action`, ctx, isChoice(action));
      if (children.length) out.push({ kind: 'group', action, children });
      continue;
    }
    const code = (action.code as Json[] | undefined)?.[0];
    const description = (action.title ?? action.description ?? action.textEquivalent) as string | undefined;
    if (!description && !code) {
      fail(unprocessable(`${where} needs a title, description or code to become a Task`, where));
    }
    const owner = ownerOf(action, where, ctx.params);
    const due = dueDate(action, where, ctx.now);
    const task: Json = {
      resourceType: 'Task',
      status: 'requested',
      intent: choice ? 'option' : 'order',
      priority: action.priority,
      description: description ?? (code?.text as string | undefined),
      code,
      for: { reference: ctx.params.subject },
      encounter: ctx.params.encounter ? { reference: ctx.params.encounter } : undefined,
      authoredOn: ctx.now.toISOString(),
      requester: ctx.requester,
      owner,
      restriction: due ? { period: { end: due } } : undefined,
      note: action.description && action.title ? [{ text: action.description }] : undefined,
    };
    out.push({
      kind: 'task',
      action,
      task: Object.fromEntries(Object.entries(task).filter(([, v]) => v !== undefined)),
    });
  }
  return out;
}

/** The Task owner from the action's first participant: practitioner → the practitioner parameter, organization → the organization parameter. */
function ownerOf(action: Json, where: string, params: ApplyParameters): Reference | undefined {
  const participants = (action.participant as Json[] | undefined) ?? [];
  for (const [i, p] of participants.entries()) {
    if (p.type === 'practitioner' && params.practitioner) return { reference: params.practitioner };
    if (p.type === 'organization' && params.organization) return { reference: params.organization };
    if (!['practitioner', 'organization', 'patient', 'related-person', 'device'].includes(p.type as string)) {
      fail(
        unprocessable(
          `${where}.participant[${i}].type "${String(p.type)}" is not a participant type`,
          `${where}.participant[${i}].type`,
        ),
      );
    }
    if (p.type === 'patient') return { reference: params.subject };
  }
  return undefined;
}

/** Reads the PlanDefinition by id or by canonical URL (url or url|version). */
async function findDefinition(repo: Repository, id: string | undefined, canonical: string | undefined): Promise<Json> {
  if (id) return (await repo.readResource('PlanDefinition', id)).resource as unknown as Json;
  if (!canonical) {
    fail(
      badRequest(
        'PlanDefinition/$apply at type level needs a planDefinition parameter (canonical URL or PlanDefinition/{id})',
        'planDefinition',
      ),
    );
  }
  const byId = /^PlanDefinition\/([A-Za-z0-9\-.]{1,64})$/.exec(canonical);
  if (byId) return (await repo.readResource('PlanDefinition', byId[1])).resource as unknown as Json;
  const [url, version] = canonical.split('|');
  const query = new URLSearchParams({ url });
  if (version) query.set('version', version);
  const ids = await repo.findMatches('PlanDefinition', query.toString(), 2);
  if (ids.length === 0) fail(unprocessable(`No PlanDefinition has the url ${canonical}`, 'planDefinition'));
  if (ids.length > 1)
    fail(unprocessable(`More than one PlanDefinition has the url ${canonical}: give a version`, 'planDefinition'));
  return (await repo.readResource('PlanDefinition', ids[0])).resource as unknown as Json;
}

/** Applies the definition; answers the CarePlan as stored (with its activities). */
export async function applyPlanDefinition(
  repo: Repository,
  definition: Json,
  params: ApplyParameters,
  now = new Date(),
): Promise<Resource> {
  if (definition.status === 'retired') {
    fail(unprocessable(`PlanDefinition/${String(definition.id)} is retired`, 'PlanDefinition.status'));
  }
  const patientId = REFERENCE.exec(params.subject)?.[2] as string;
  const patient = (await repo.readResource('Patient', patientId)).resource;
  if (params.encounter) await repo.readResource('Encounter', params.encounter.split('/')[1]);
  const requester = params.practitioner ? { reference: params.practitioner } : undefined;
  if (params.practitioner)
    await repo.readResource(params.practitioner.split('/')[0], params.practitioner.split('/')[1]);
  if (params.organization) await repo.readResource('Organization', params.organization.split('/')[1]);

  const planned = plannedActions((definition.action as Json[] | undefined) ?? [], 'PlanDefinition.action', {
    patient,
    params,
    now,
    requester,
  });
  const goals = ((definition.goal as Json[] | undefined) ?? []).map((g, i) => {
    if (!g.description)
      fail(unprocessable(`PlanDefinition.goal[${i}] needs a description`, `PlanDefinition.goal[${i}].description`));
    const target = ((g.target as Json[] | undefined) ?? []).map((t, j) => {
      const out: Json = {
        measure: t.measure,
        detailQuantity: t.detailQuantity,
        detailRange: t.detailRange,
        detailCodeableConcept: t.detailCodeableConcept,
      };
      if (t.due)
        out.dueDate = new Date(now.getTime() + durationMs(t.due as Json, `PlanDefinition.goal[${i}].target[${j}].due`))
          .toISOString()
          .slice(0, 10);
      return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
    });
    const goal: Json = {
      resourceType: 'Goal',
      lifecycleStatus: 'active',
      category: g.category ? [g.category] : undefined,
      priority: g.priority,
      description: g.description,
      subject: { reference: params.subject },
      startDate: now.toISOString().slice(0, 10),
      target: target.length ? target : undefined,
      addresses: g.addresses,
    };
    return Object.fromEntries(Object.entries(goal).filter(([, v]) => v !== undefined)) as unknown as Resource;
  });

  const canonical = definition.url
    ? `${definition.url as string}${definition.version ? `|${definition.version as string}` : ''}`
    : undefined;
  return repo.withTransaction(async (tx) => {
    const savedGoals = [];
    for (const g of goals) savedGoals.push((await tx.createResource(g)).resource);
    const plan: Json = {
      resourceType: 'CarePlan',
      status: 'active',
      intent: 'plan',
      instantiatesCanonical: canonical ? [canonical] : undefined,
      title: definition.title ?? definition.name,
      description: definition.description,
      subject: { reference: params.subject },
      encounter: params.encounter ? { reference: params.encounter } : undefined,
      created: now.toISOString(),
      author: requester,
      period: { start: now.toISOString() },
      goal: savedGoals.length ? savedGoals.map((g) => ({ reference: `Goal/${g.id as string}` })) : undefined,
    };
    const created = (
      await tx.createResource(
        Object.fromEntries(Object.entries(plan).filter(([, v]) => v !== undefined)) as unknown as Resource,
      )
    ).resource as unknown as Json;
    const carePlan = `CarePlan/${created.id as string}`;
    const references = new Map<Json, string>();
    const activity = [];
    for (const { task } of plannedLeaves(planned)) {
      const saved = (await tx.createResource({ ...task, basedOn: [{ reference: carePlan }] } as unknown as Resource))
        .resource;
      references.set(task, `Task/${saved.id as string}`);
      activity.push({ reference: { reference: `Task/${saved.id as string}`, display: task.description } });
    }
    if (needsRequestGroup(planned)) {
      // Grouped actions: the plan's one activity is the RequestGroup, which holds the structure.
      const group = buildRequestGroup({
        planned,
        references,
        subject: params.subject,
        encounter: params.encounter,
        author: requester,
        canonical,
        carePlan,
        now,
      });
      const savedGroup = (await tx.createResource(group as unknown as Resource)).resource;
      activity.splice(0, activity.length, {
        reference: {
          reference: `RequestGroup/${savedGroup.id as string}`,
          display: (definition.title ?? definition.name ?? 'Plan actions') as string,
        },
      });
    }
    if (activity.length === 0) return created as unknown as Resource;
    const { meta: _meta, ...rest } = created;
    return (await tx.updateResource({ ...rest, activity } as unknown as Resource)).resource;
  });
}

export function applyOperation(): OperationRegistration {
  return {
    definition: standardDefinition('PlanDefinition-apply'),
    // R4 lets $apply answer an unsaved CarePlan; Hearth stores what it creates, so POST only.
    override: { methods: ['POST'] },
    handler: async (input) => {
      const params = applyParameters(input);
      const { repo } = input.context;
      const definition = await findDefinition(repo, input.target.id, params.planDefinition);
      return jsonResult(await applyPlanDefinition(repo, definition, params));
    },
  };
}
