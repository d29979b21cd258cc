import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import type { TestMember } from '../test/auth.js';
import { addPatientMember, createAs, createScheduleFixture, operation, type ScheduleFixture } from './testing.js';

let t: TestApp;
let dana: ScheduleFixture;
let lee: ScheduleFixture;
let alice: Resource & { id: string };
let aliceMember: TestMember;

const DAY = 86_400_000;

beforeAll(async () => {
  t = await createTestApp();
  dana = await createScheduleFixture(t, undefined, 'Dana');
  lee = await createScheduleFixture(t, undefined, 'Lee');
  for (const s of [dana, lee]) {
    expect((await operation(t, `Schedule/${s.schedule.id}/$generate-slots`, [])).statusCode).toBe(200);
  }
  alice = await createAs(t, { resourceType: 'Patient', name: [{ family: 'Alice' }] });
  aliceMember = await addPatientMember(t, alice);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

type SlotEntry = {
  resource: { resourceType: string; id: string; start: string; schedule?: { reference: string } };
  search?: { mode: string };
};

const find = (query: string, headers = t.authHeaders) =>
  t.app.inject({ url: `/fhir/R4/Appointment/$find?${query}`, headers });
const slotsOf = (res: { json: () => { entry?: SlotEntry[] } }) =>
  (res.json().entry ?? []).filter((e) => e.resource.resourceType === 'Slot').map((e) => e.resource);
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('Appointment/$find', () => {
  it("finds a practitioner's free slots in a date range, in start order, with their schedule", async () => {
    const res = await find(
      `practitioner=Practitioner/${dana.practitioner.id}&start=${day(dana.monday)}&end=${day(dana.monday)}`,
    );
    expect(res.statusCode).toBe(200);
    const slots = slotsOf(res);
    expect(slots.map((s) => s.start.slice(11, 16))).toEqual(['09:00', '09:30', '10:00', '10:30', '11:00', '11:30']);
    expect(new Set(slots.map((s) => s.schedule?.reference))).toEqual(new Set([`Schedule/${dana.schedule.id}`]));
    const included = res.json().entry.filter((e: SlotEntry) => e.search?.mode === 'include');
    expect(included.map((e: SlotEntry) => e.resource.id)).toEqual([dana.schedule.id]);
  });

  it('narrows by location, service type and schedule, leaves busy slots out, and pages', async () => {
    const week = `start=${day(dana.monday)}&end=${day(dana.monday + 4 * DAY)}`;
    expect(slotsOf(await find(`location=Location/${lee.location.id}&${week}&_count=100`))).toHaveLength(30);
    expect(slotsOf(await find(`service-type=http://snomed.info/sct|11429006&${week}&_count=100`))).toHaveLength(60);
    expect(slotsOf(await find(`service-type=http://snomed.info/sct|000&${week}`))).toHaveLength(0);
    const first = slotsOf(await find(`schedule=Schedule/${lee.schedule.id}&${week}`))[0];
    const booked = await operation(t, 'Appointment/$book', [
      { name: 'slot', valueReference: { reference: `Slot/${first.id}` } },
      { name: 'patient', valueReference: { reference: `Patient/${alice.id}` } },
    ]);
    expect(booked.statusCode).toBe(201);
    const page1 = await find(`schedule=Schedule/${lee.schedule.id}&${week}&_count=20`);
    expect(slotsOf(page1)).toHaveLength(20);
    expect(slotsOf(page1).map((s) => s.id)).not.toContain(first.id);
    const next = page1.json().link.find((l: { relation: string }) => l.relation === 'next');
    expect(next.url).toContain('Appointment/$find?');
    const page2 = await t.app.inject({
      url: new URL(next.url).pathname + new URL(next.url).search,
      headers: t.authHeaders,
    });
    expect(slotsOf(page2)).toHaveLength(9);
    expect(page2.json().link.find((l: { relation: string }) => l.relation === 'next')).toBeUndefined();
  });

  it('takes a Parameters body', async () => {
    const res = await operation(t, 'Appointment/$find', [
      { name: 'practitioner', valueReference: { reference: `Practitioner/${dana.practitioner.id}` } },
      { name: 'start', valueDate: day(dana.monday + DAY) },
      { name: 'end', valueDate: day(dana.monday + DAY) },
      { name: '_count', valueInteger: 2 },
    ]);
    expect(res.statusCode).toBe(200);
    expect(slotsOf(res).map((s) => s.start.slice(0, 16))).toEqual([
      `${day(dana.monday + DAY)}T09:00`,
      `${day(dana.monday + DAY)}T09:30`,
    ]);
  });

  it('answers 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      [`end=${day(dana.monday)}`, 'start'],
      [`start=${day(dana.monday)}`, 'end'],
      [`start=tomorrow&end=${day(dana.monday)}`, 'start'],
      [`start=${day(dana.monday)}&end=${day(dana.monday - 2 * DAY)}`, 'end'],
      [`practitioner=Patient/1&start=${day(dana.monday)}&end=${day(dana.monday)}`, 'practitioner'],
      [`_count=5000&start=${day(dana.monday)}&end=${day(dana.monday)}`, '_count'],
    ];
    for (const [query, where] of cases) {
      const res = await find(query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().issue[0].expression, query).toEqual([where]);
    }
    expect((await find(`colour=red&start=${day(dana.monday)}&end=${day(dana.monday)}`)).statusCode).toBe(422);
  });

  it('a patient finds slots for themselves, not for another patient', async () => {
    const range = `start=${day(dana.monday)}&end=${day(dana.monday)}`;
    const own = await find(
      `practitioner=Practitioner/${dana.practitioner.id}&${range}&patient=Patient/${alice.id}`,
      aliceMember.headers,
    );
    expect(own.statusCode).toBe(200);
    expect(slotsOf(own)).toHaveLength(6);
    const other = await find(`${range}&patient=Patient/someone-else`, aliceMember.headers);
    expect(other.statusCode).toBe(403);
    expect(other.json().resourceType).toBe('OperationOutcome');
  });
});
