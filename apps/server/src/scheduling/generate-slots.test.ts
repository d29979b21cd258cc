import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availabilityExtension, type Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import {
  createAs,
  createScheduleFixture,
  FHIR_JSON,
  freeSlots,
  operation,
  WEEKDAY_MORNINGS,
  type ScheduleFixture,
} from './testing.js';

let t: TestApp;
let f: ScheduleFixture;

beforeAll(async () => {
  t = await createTestApp();
  f = await createScheduleFixture(t);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const counts = (res: { json: () => { parameter: { name: string; valueInteger?: number }[] } }) =>
  Object.fromEntries(
    res
      .json()
      .parameter.filter((p) => p.valueInteger !== undefined)
      .map((p) => [p.name, p.valueInteger]),
  );

async function slots(scheduleId: string) {
  const res = await t.app.inject({
    url: `/fhir/R4/Slot?schedule=Schedule/${scheduleId}&_sort=start&_count=1000`,
    headers: t.authHeaders,
  });
  return (res.json().entry ?? []).map(
    (e: {
      resource: { id: string; start: string; end: string; status: string; comment?: string; serviceType?: unknown };
    }) => e.resource,
  );
}

async function setAvailability(schedule: Resource & { id: string }, availability = WEEKDAY_MORNINGS) {
  const current = (await t.app.inject({ url: `/fhir/R4/Schedule/${schedule.id}`, headers: t.authHeaders })).json();
  const res = await t.app.inject({
    method: 'PUT',
    url: `/fhir/R4/Schedule/${schedule.id}`,
    headers: { ...t.authHeaders, 'content-type': FHIR_JSON },
    payload: { ...current, extension: [availabilityExtension(availability)] },
  });
  expect(res.statusCode).toBe(200);
}

describe('Schedule/$generate-slots', () => {
  it('materialises the working hours over the planning horizon, and a second run changes nothing', async () => {
    const first = await operation(t, `Schedule/${f.schedule.id}/$generate-slots`, []);
    expect(first.statusCode).toBe(200);
    // Monday to Friday, 09:00-12:00 UTC, 30 minutes: 6 a day.
    expect(counts(first)).toEqual({ created: 30, updated: 0, deleted: 0, unchanged: 0, skipped: 0 });
    const all = await slots(f.schedule.id);
    expect(all).toHaveLength(30);
    expect(all[0]).toMatchObject({
      start: new Date(f.monday + 9 * 3_600_000).toISOString(),
      end: new Date(f.monday + 9.5 * 3_600_000).toISOString(),
      status: 'free',
      serviceType: [{ coding: [{ code: '11429006' }] }],
    });
    const again = await operation(t, `Schedule/${f.schedule.id}/$generate-slots`, []);
    expect(counts(again)).toEqual({ created: 0, updated: 0, deleted: 0, unchanged: 30, skipped: 0 });
    expect(await slots(f.schedule.id)).toHaveLength(30);
  });

  it('after the rules change, updates future free slots and never touches a booked one', async () => {
    const g = await createScheduleFixture(t, WEEKDAY_MORNINGS, 'Changer');
    await operation(t, `Schedule/${g.schedule.id}/$generate-slots`, []);
    const patient = await createAs(t, { resourceType: 'Patient', name: [{ family: 'Booked' }] });
    const [first, second] = await freeSlots(t, g.schedule.id);
    const booked = await operation(t, 'Appointment/$book', [
      { name: 'slot', valueReference: { reference: `Slot/${second.id}` } },
      { name: 'patient', valueReference: { reference: `Patient/${patient.id}` } },
    ]);
    expect(booked.statusCode).toBe(201);
    // Now 45-minute slots, Monday and Tuesday only, and Tuesday is a holiday.
    const tuesday = new Date(g.monday + 86_400_000).toISOString().slice(0, 10);
    await setAvailability(g.schedule, {
      ...WEEKDAY_MORNINGS,
      slotMinutes: 45,
      availableTime: [{ daysOfWeek: ['mon', 'tue'], startMinute: 9 * 60, endMinute: 12 * 60 }],
      notAvailableTime: [{ description: 'Holiday', start: tuesday, end: tuesday }],
    });
    const res = await operation(t, `Schedule/${g.schedule.id}/$generate-slots`, []);
    expect(res.statusCode).toBe(200);
    const after = await slots(g.schedule.id);
    const monday = after.filter((s: { start: string }) =>
      s.start.startsWith(new Date(g.monday).toISOString().slice(0, 10)),
    );
    // 09:00-09:45 overlaps the booked 09:30 slot and 09:45-10:30 too: skipped; the booked slot is kept as it was.
    expect(monday.map((s: { start: string; status: string }) => `${s.start.slice(11, 16)} ${s.status}`)).toEqual([
      '09:30 busy',
      '10:30 free',
      '11:15 free',
    ]);
    expect(monday.find((s: { id: string }) => s.id === second.id)).toBeDefined();
    expect(after.find((s: { id: string }) => s.id === first.id)).toBeUndefined();
    const tue = after.filter((s: { start: string }) => s.start.startsWith(tuesday));
    expect(tue).toHaveLength(4);
    expect(
      tue.every(
        (s: { status: string; comment?: string }) => s.status === 'busy-unavailable' && s.comment === 'Holiday',
      ),
    ).toBe(true);
    expect(after).toHaveLength(7);
    expect(counts(res)).toEqual({ created: 6, updated: 0, deleted: 29, unchanged: 0, skipped: 2 });
    // The holiday is lifted: the same slots turn free, updated in place.
    await setAvailability(g.schedule, {
      ...WEEKDAY_MORNINGS,
      slotMinutes: 45,
      availableTime: [{ daysOfWeek: ['mon', 'tue'], startMinute: 9 * 60, endMinute: 12 * 60 }],
    });
    const lifted = await operation(t, `Schedule/${g.schedule.id}/$generate-slots`, []);
    expect(counts(lifted)).toEqual({ created: 0, updated: 4, deleted: 0, unchanged: 2, skipped: 2 });
  });

  it('a time-range exception added later turns the slots it overlaps busy-unavailable in place; a booked one stays', async () => {
    const g = await createScheduleFixture(t, WEEKDAY_MORNINGS, 'Meeting');
    expect(counts(await operation(t, `Schedule/${g.schedule.id}/$generate-slots`, []))).toMatchObject({ created: 30 });
    const patient = await createAs(t, { resourceType: 'Patient', name: [{ family: 'Eleven' }] });
    const at = (hours: number) => new Date(g.monday + hours * 3_600_000).toISOString();
    const eleven = (await slots(g.schedule.id)).find((s: { start: string }) => s.start === at(11));
    expect(
      (
        await operation(t, 'Appointment/$book', [
          { name: 'slot', valueReference: { reference: `Slot/${eleven.id}` } },
          { name: 'patient', valueReference: { reference: `Patient/${patient.id}` } },
        ])
      ).statusCode,
    ).toBe(201);
    // A team meeting on Monday from 10:15 to 11:30 (UTC).
    await setAvailability(g.schedule, {
      ...WEEKDAY_MORNINGS,
      notAvailableTime: [{ description: 'Team meeting', start: at(10.25), end: at(11.5) }],
    });
    const res = await operation(t, `Schedule/${g.schedule.id}/$generate-slots`, []);
    expect(counts(res)).toEqual({ created: 0, updated: 2, deleted: 0, unchanged: 27, skipped: 1 });
    const after = await slots(g.schedule.id);
    expect(after).toHaveLength(30);
    const monday = after.filter((s: { start: string }) => s.start < at(24));
    expect(
      monday.map((s: { start: string; status: string; comment?: string }) =>
        [s.start.slice(11, 16), s.status, s.comment].filter(Boolean).join(' '),
      ),
    ).toEqual([
      '09:00 free',
      '09:30 free',
      '10:00 busy-unavailable Team meeting',
      '10:30 busy-unavailable Team meeting',
      '11:00 busy',
      '11:30 free',
    ]);
    // Nothing to do the second time, and an unavailable slot cannot be booked.
    const again = await operation(t, `Schedule/${g.schedule.id}/$generate-slots`, []);
    expect(counts(again)).toEqual({ created: 0, updated: 0, deleted: 0, unchanged: 29, skipped: 1 });
    const ten = monday.find((s: { start: string }) => s.start === at(10));
    const refused = await operation(t, 'Appointment/$book', [
      { name: 'slot', valueReference: { reference: `Slot/${ten.id}` } },
      { name: 'patient', valueReference: { reference: `Patient/${patient.id}` } },
    ]);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('busy-unavailable');
  });

  it('answers 4xx naming what is wrong', async () => {
    const bare = await createAs(t, { resourceType: 'Schedule', active: true, actor: [{ display: 'Nobody' }] });
    const none = await operation(t, `Schedule/${bare.id}/$generate-slots`, []);
    expect(none.statusCode).toBe(422);
    expect(none.body).toContain('no availability extension');
    const noEnd = await createAs(t, {
      resourceType: 'Schedule',
      active: true,
      actor: [{ display: 'Nobody' }],
      extension: [availabilityExtension(WEEKDAY_MORNINGS)],
    } as Resource);
    const endless = await operation(t, `Schedule/${noEnd.id}/$generate-slots`, []);
    expect(endless.statusCode).toBe(422);
    expect(endless.json().issue[0].expression).toEqual(['Schedule.planningHorizon.end']);
    const tooLong = await operation(t, `Schedule/${noEnd.id}/$generate-slots`, [
      { name: 'end', valueDateTime: new Date(Date.now() + 400 * 86_400_000).toISOString() },
    ]);
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.body).toContain('366 days');
    const badDate = await operation(t, `Schedule/${noEnd.id}/$generate-slots`, [{ name: 'end', valueString: 'soon' }]);
    expect(badDate.statusCode).toBe(400);
    expect(badDate.json().issue[0].expression).toEqual(['end']);
    const unknown = await operation(t, `Schedule/${noEnd.id}/$generate-slots`, [
      { name: 'colour', valueString: 'red' },
    ]);
    expect(unknown.statusCode).toBe(422);
    const broken = await createAs(t, {
      resourceType: 'Schedule',
      active: true,
      actor: [{ display: 'Nobody' }],
      planningHorizon: { end: new Date(Date.now() + 86_400_000).toISOString() },
      extension: [
        {
          url: 'https://hearth.dev/fhir/StructureDefinition/availability',
          extension: [{ url: 'timeZone', valueCode: 'Nowhere/Land' }],
        },
      ],
    } as Resource);
    const badZone = await operation(t, `Schedule/${broken.id}/$generate-slots`, []);
    expect(badZone.statusCode).toBe(422);
    expect(badZone.json().issue[0].expression).toEqual(['Schedule.extension[0].extension[0].valueCode']);
    const missing = await operation(t, 'Schedule/does-not-exist/$generate-slots', []);
    expect(missing.statusCode).toBe(404);
    const get = await t.app.inject({ url: `/fhir/R4/Schedule/${bare.id}/$generate-slots`, headers: t.authHeaders });
    expect(get.statusCode).toBe(405);
  });
});
