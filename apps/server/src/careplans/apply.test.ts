/** PlanDefinition/$apply against a real server: CarePlan, Goals, Tasks, conditions, timing, errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function post(resource: Resource | Json): Promise<Json> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType as string}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

async function apply(url: string, parameter: Json[]): Promise<{ status: number; body: Json }> {
  const res = await t.app.inject({
    method: 'POST',
    url,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: { resourceType: 'Parameters', parameter },
  });
  return { status: res.statusCode, body: res.json() };
}

async function read(ref: string): Promise<Json> {
  const res = await t.app.inject({ url: `/fhir/R4/${ref}`, headers: t.authHeaders });
  return res.json();
}

let female: Json;
let male: Json;
let doctor: Json;

beforeAll(async () => {
  t = await createTestApp();
  female = await post({ resourceType: 'Patient', gender: 'female', name: [{ family: 'Plan' }] });
  male = await post({ resourceType: 'Patient', gender: 'male', name: [{ family: 'Plan' }] });
  doctor = await post({ resourceType: 'Practitioner', name: [{ family: 'Doc' }] });
});

afterAll(async () => {
  await t?.close();
});

const DEFINITION = {
  resourceType: 'PlanDefinition',
  status: 'active',
  url: 'http://example.org/PlanDefinition/diabetes',
  version: '1',
  title: 'Diabetes follow-up',
  description: 'Quarterly review',
  goal: [
    {
      description: { text: 'HbA1c below 7%' },
      target: [
        {
          measure: { text: 'HbA1c' },
          detailQuantity: { value: 7, unit: '%' },
          due: { value: 3, code: 'mo', system: 'http://unitsofmeasure.org' },
        },
      ],
    },
  ],
  action: [
    {
      title: 'HbA1c test',
      timingDuration: { value: 2, code: 'wk', system: 'http://unitsofmeasure.org' },
      participant: [{ type: 'practitioner' }],
    },
    {
      title: 'Foot care',
      action: [
        { title: 'Foot exam' },
        {
          title: 'Pregnancy check',
          condition: [
            {
              kind: 'applicability',
              expression: { language: 'text/fhirpath', expression: "%patient.gender = 'female'" },
            },
          ],
        },
      ],
    },
  ],
};

describe('PlanDefinition/$apply', () => {
  it('creates a CarePlan with its Goal and one Task per applicable action, in one go', async () => {
    const def = await post(DEFINITION);
    const before = Date.now();
    const { status, body } = await apply(`/fhir/R4/PlanDefinition/${def.id as string}/$apply`, [
      { name: 'subject', valueString: `Patient/${female.id as string}` },
      { name: 'practitioner', valueReference: { reference: `Practitioner/${doctor.id as string}` } },
    ]);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      resourceType: 'CarePlan',
      status: 'active',
      intent: 'plan',
      title: 'Diabetes follow-up',
      description: 'Quarterly review',
      instantiatesCanonical: ['http://example.org/PlanDefinition/diabetes|1'],
      subject: { reference: `Patient/${female.id as string}` },
    });
    expect(body.goal).toHaveLength(1);
    const goal = await read(body.goal[0].reference);
    expect(goal).toMatchObject({
      resourceType: 'Goal',
      lifecycleStatus: 'active',
      description: { text: 'HbA1c below 7%' },
    });
    expect(goal.target[0].detailQuantity.value).toBe(7);
    // Grouped actions: the plan's activity is a RequestGroup mirroring the applicable actions.
    expect(body.activity).toHaveLength(1);
    expect(body.activity[0].reference.reference).toMatch(/^RequestGroup\//);
    const group = await read(body.activity[0].reference.reference);
    expect(group).toMatchObject({
      resourceType: 'RequestGroup',
      status: 'active',
      intent: 'plan',
      instantiatesCanonical: ['http://example.org/PlanDefinition/diabetes|1'],
      basedOn: [{ reference: `CarePlan/${body.id as string}` }],
      subject: { reference: `Patient/${female.id as string}` },
      author: { reference: `Practitioner/${doctor.id as string}` },
    });
    expect(group.action.map((a: Json) => a.title)).toEqual(['HbA1c test', 'Foot care']);
    expect(group.action[0].timingDuration).toEqual({ value: 2, code: 'wk', system: 'http://unitsofmeasure.org' });
    expect(group.action[1].action.map((a: Json) => a.title)).toEqual(['Foot exam', 'Pregnancy check']);
    const leaves = [group.action[0], ...group.action[1].action].map((a: Json) => a.resource.reference as string);
    const tasks = await Promise.all(leaves.map((ref) => read(ref)));
    expect(tasks[0].owner).toEqual({ reference: `Practitioner/${doctor.id as string}` });
    const due = Date.parse(tasks[0].restriction.period.end);
    expect(due - before).toBeGreaterThanOrEqual(14 * 86_400_000 - 1000);
    expect(due - before).toBeLessThan(14 * 86_400_000 + 60_000);
    expect(tasks[1].restriction).toBeUndefined();
  });

  it('skips actions whose FHIRPath condition is false; type level takes the canonical URL', async () => {
    const { status, body } = await apply('/fhir/R4/PlanDefinition/$apply', [
      { name: 'planDefinition', valueCanonical: 'http://example.org/PlanDefinition/diabetes|1' },
      { name: 'subject', valueString: `Patient/${male.id as string}` },
    ]);
    expect(status, JSON.stringify(body)).toBe(200);
    const group = await read(body.activity[0].reference.reference);
    expect(group.action[1].action.map((a: Json) => a.title)).toEqual(['Foot exam']);
    const search = await t.app.inject({
      url: `/fhir/R4/Task?based-on=CarePlan/${body.id as string}`,
      headers: t.authHeaders,
    });
    expect(search.json().entry).toHaveLength(2);
  });

  it('without groups or behaviors, references each Task from the plan and writes no RequestGroup', async () => {
    const def = await post({
      ...DEFINITION,
      url: 'http://example.org/PlanDefinition/flat',
      action: [{ title: 'Diet advice' }, { title: 'Eye exam', timingDateTime: '2030-01-01T09:00:00Z' }],
    });
    const { status, body } = await apply(`/fhir/R4/PlanDefinition/${def.id as string}/$apply`, [
      { name: 'subject', valueString: `Patient/${female.id as string}` },
    ]);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.activity.map((a: Json) => a.reference.display)).toEqual(['Diet advice', 'Eye exam']);
    expect(body.activity.every((a: Json) => a.reference.reference.startsWith('Task/'))).toBe(true);
    const groups = await t.app.inject({
      url: `/fhir/R4/RequestGroup?subject=Patient/${female.id as string}&instantiates-canonical=http://example.org/PlanDefinition/flat|1`,
      headers: t.authHeaders,
    });
    expect(groups.statusCode).toBe(200);
    expect(groups.json().entry ?? []).toHaveLength(0);
  });

  it('keeps selection behavior in the RequestGroup; the alternatives of a choice are options', async () => {
    const def = await post({
      ...DEFINITION,
      url: 'http://example.org/PlanDefinition/choice',
      action: [
        { title: 'Smoking status', requiredBehavior: 'must' },
        {
          title: 'Statin',
          groupingBehavior: 'logical-group',
          selectionBehavior: 'exactly-one',
          action: [{ title: 'Atorvastatin 20 mg' }, { title: 'Simvastatin 20 mg' }],
        },
      ],
    });
    const { status, body } = await apply(`/fhir/R4/PlanDefinition/${def.id as string}/$apply`, [
      { name: 'subject', valueString: `Patient/${male.id as string}` },
    ]);
    expect(status, JSON.stringify(body)).toBe(200);
    const group = await read(body.activity[0].reference.reference);
    expect(group.action[0]).toMatchObject({ title: 'Smoking status', requiredBehavior: 'must' });
    expect(group.action[1]).toMatchObject({ groupingBehavior: 'logical-group', selectionBehavior: 'exactly-one' });
    const smoking = await read(group.action[0].resource.reference);
    const options = await Promise.all(group.action[1].action.map((a: Json) => read(a.resource.reference)));
    expect(smoking.intent).toBe('order');
    expect(options.map((o) => [o.description, o.intent])).toEqual([
      ['Atorvastatin 20 mg', 'option'],
      ['Simvastatin 20 mg', 'option'],
    ]);
    for (const task of [smoking, ...options])
      expect(task.basedOn).toEqual([{ reference: `CarePlan/${body.id as string}` }]);
  });

  it('answers 4xx with an OperationOutcome naming the element, and writes nothing', async () => {
    const def = await post({
      ...DEFINITION,
      url: 'http://example.org/PlanDefinition/bad',
      action: [
        { title: 'ok' },
        { title: 'Dose', dynamicValue: [{ path: 'x', expression: { language: 'text/cql', expression: 'x' } }] },
      ],
    });
    const bad = await apply(`/fhir/R4/PlanDefinition/${def.id as string}/$apply`, [
      { name: 'subject', valueString: `Patient/${male.id as string}` },
    ]);
    expect(bad.status).toBe(422);
    expect(bad.body.resourceType).toBe('OperationOutcome');
    expect(bad.body.issue[0].expression).toEqual(['PlanDefinition.action[1].dynamicValue']);

    const cond = await post({
      ...DEFINITION,
      url: 'http://example.org/PlanDefinition/cql',
      action: [
        {
          title: 'x',
          condition: [{ kind: 'applicability', expression: { language: 'text/cql', expression: 'true' } }],
        },
      ],
    });
    const cql = await apply(`/fhir/R4/PlanDefinition/${cond.id as string}/$apply`, [
      { name: 'subject', valueString: `Patient/${male.id as string}` },
    ]);
    expect(cql.status).toBe(422);
    expect(cql.body.issue[0].expression).toEqual(['PlanDefinition.action[0].condition[0].expression']);

    const noSubject = await apply(`/fhir/R4/PlanDefinition/${def.id as string}/$apply`, []);
    expect(noSubject.status).toBe(400);
    expect(noSubject.body.issue[0].expression).toEqual(['subject']);

    const notPatient = await apply(`/fhir/R4/PlanDefinition/${def.id as string}/$apply`, [
      { name: 'subject', valueString: `Practitioner/${doctor.id as string}` },
    ]);
    expect(notPatient.status).toBe(400);

    const missing = await apply(`/fhir/R4/PlanDefinition/${def.id as string}/$apply`, [
      { name: 'subject', valueString: 'Patient/does-not-exist' },
    ]);
    expect(missing.status).toBe(404);

    const plans = await t.app.inject({
      url: `/fhir/R4/CarePlan?subject=Patient/${male.id as string}`,
      headers: t.authHeaders,
    });
    // Only the plans of the previous tests: the failed applies wrote nothing.
    expect(plans.json().entry).toHaveLength(2);
  });
});
