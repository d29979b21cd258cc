import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import type { TestMember } from '../test/auth.js';
import {
  addPatientMember,
  createAs,
  createScheduleFixture,
  FHIR_JSON,
  freeSlots,
  operation,
  type ScheduleFixture,
} from './testing.js';

let t: TestApp;
let f: ScheduleFixture;
let alice: { id: string };
let bob: { id: string };
let aliceMember: TestMember;

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  f = await createScheduleFixture(t);
  const generated = await operation(t, `Schedule/${f.schedule.id}/$generate-slots`, []);
  expect(generated.statusCode).toBe(200);
  alice = await createAs(t, { resourceType: 'Patient', name: [{ family: 'Alice' }] });
  bob = await createAs(t, { resourceType: 'Patient', name: [{ family: 'Bob' }] });
  aliceMember = await addPatientMember(t, alice as never);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const book = (slotId: string, patientId: string, headers = t.authHeaders, extra: Record<string, unknown>[] = []) =>
  operation(
    t,
    'Appointment/$book',
    [
      { name: 'slot', valueReference: { reference: `Slot/${slotId}` } },
      { name: 'patient', valueReference: { reference: `Patient/${patientId}` } },
      ...extra,
    ],
    headers,
  );

const read = async (ref: string, headers = t.authHeaders) =>
  (await t.app.inject({ url: `/fhir/R4/${ref}`, headers })).json();

describe('Appointment/$book', () => {
  it('creates the Appointment and marks the Slot busy', async () => {
    const [slot] = await freeSlots(t, f.schedule.id);
    const res = await book(slot.id, alice.id, t.authHeaders, [
      {
        name: 'appointment',
        resource: {
          resourceType: 'Appointment',
          status: 'proposed',
          description: 'Knee pain follow-up',
          participant: [{ actor: { reference: `Patient/${alice.id}` }, status: 'needs-action' }],
        },
      },
    ]);
    expect(res.statusCode).toBe(201);
    const appt = res.json();
    expect(res.headers.location).toContain(`Appointment/${appt.id}`);
    expect(appt).toMatchObject({
      status: 'booked',
      description: 'Knee pain follow-up',
      start: slot.start,
      minutesDuration: 30,
      slot: [{ reference: `Slot/${slot.id}` }],
      serviceType: [{ coding: [{ code: '11429006' }] }],
    });
    expect(appt.participant.map((p: { actor: { reference: string } }) => p.actor.reference)).toEqual([
      `Patient/${alice.id}`,
      `Practitioner/${f.practitioner.id}`,
      `Location/${f.location.id}`,
    ]);
    expect((await read(`Slot/${slot.id}`)).status).toBe('busy');
    const again = await book(slot.id, bob.id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ code: 'conflict' }] });
  });

  it('of 20 concurrent bookings of one slot, exactly one is 201 and nineteen are 409', async () => {
    const slot = (await freeSlots(t, f.schedule.id))[0];
    const patients = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createAs(t, { resourceType: 'Patient', name: [{ family: `Racer${i}` }] })),
    );
    const responses = await Promise.all(
      patients.map((p) =>
        fetch(`${t.baseUrl}fhir/R4/Appointment/$book`, {
          method: 'POST',
          headers: { ...t.authHeaders, 'content-type': FHIR_JSON },
          body: JSON.stringify({
            resourceType: 'Parameters',
            parameter: [
              { name: 'slot', valueReference: { reference: `Slot/${slot.id}` } },
              { name: 'patient', valueReference: { reference: `Patient/${p.id}` } },
            ],
          }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { resourceType: string } })),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(409)]);
    for (const r of responses.filter((x) => x.status === 409)) {
      expect(r.body.resourceType).toBe('OperationOutcome');
    }
    // Exactly one Appointment holds the slot.
    const held = await t.app.inject({ url: `/fhir/R4/Appointment?slot=Slot/${slot.id}`, headers: t.authHeaders });
    expect(held.json().entry).toHaveLength(1);
  }, 120_000);

  it('answers 4xx for bad requests', async () => {
    const [slot] = await freeSlots(t, f.schedule.id);
    const noPatient = await operation(t, 'Appointment/$book', [
      { name: 'slot', valueReference: { reference: `Slot/${slot.id}` } },
    ]);
    expect(noPatient.statusCode).toBe(400);
    expect(noPatient.json().issue[0].expression).toEqual(['patient']);
    const noSlot = await operation(t, 'Appointment/$book', [
      { name: 'patient', valueReference: { reference: `Patient/${alice.id}` } },
    ]);
    expect(noSlot.statusCode).toBe(400);
    expect(noSlot.json().issue[0].expression).toEqual(['slot']);
    const wrongType = await book(slot.id, alice.id, t.authHeaders, [
      { name: 'appointment', resource: { resourceType: 'Patient' } },
    ]);
    expect(wrongType.statusCode).toBe(400);
    expect((await book('nope', alice.id)).statusCode).toBe(404);
    expect((await book(slot.id, 'nobody')).statusCode).toBe(404);
    const notParameters = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Appointment/$book',
      headers: { ...t.authHeaders, 'content-type': FHIR_JSON },
      payload: { resourceType: 'Patient' },
    });
    expect(notParameters.statusCode).toBe(400);
    // Nothing was held by the refused bookings.
    expect((await read(`Slot/${slot.id}`)).status).toBe('free');
  });
});

describe('cancel and reschedule', () => {
  it('$reschedule moves the appointment and frees the old slot; $cancel frees the slot', async () => {
    const [from, to, taken] = await freeSlots(t, f.schedule.id);
    const appt = (await book(from.id, alice.id)).json();
    expect((await book(taken.id, bob.id)).statusCode).toBe(201);
    const clash = await operation(t, `Appointment/${appt.id}/$reschedule`, [
      { name: 'slot', valueReference: { reference: `Slot/${taken.id}` } },
    ]);
    expect(clash.statusCode).toBe(409);
    expect((await read(`Slot/${from.id}`)).status).toBe('busy');
    const moved = await operation(t, `Appointment/${appt.id}/$reschedule`, [
      { name: 'slot', valueReference: { reference: `Slot/${to.id}` } },
    ]);
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ start: to.start, slot: [{ reference: `Slot/${to.id}` }], status: 'booked' });
    expect((await read(`Slot/${from.id}`)).status).toBe('free');
    expect((await read(`Slot/${to.id}`)).status).toBe('busy');

    const cancelled = await operation(t, `Appointment/${appt.id}/$cancel`, [
      { name: 'reason', valueString: 'Feeling better' },
    ]);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', cancelationReason: { text: 'Feeling better' } });
    expect((await read(`Slot/${to.id}`)).status).toBe('free');
    // Again: nothing changes; and a cancelled appointment does not move.
    expect((await operation(t, `Appointment/${appt.id}/$cancel`, [])).statusCode).toBe(200);
    const late = await operation(t, `Appointment/${appt.id}/$reschedule`, [
      { name: 'slot', valueReference: { reference: `Slot/${from.id}` } },
    ]);
    expect(late.statusCode).toBe(422);
    const missing = await operation(t, `Appointment/${appt.id}/$reschedule`, []);
    expect(missing.statusCode).toBe(400);
    expect(missing.json().issue[0].expression).toEqual(['slot']);
  });
});

describe('patients book for themselves only', () => {
  it('a patient books, sees and cancels their own appointment', async () => {
    const [slot] = await freeSlots(t, f.schedule.id);
    const mine = await operation(
      t,
      'Appointment/$book',
      [{ name: 'slot', valueReference: { reference: `Slot/${slot.id}` } }],
      aliceMember.headers,
    );
    expect(mine.statusCode).toBe(201);
    expect(mine.json().participant[0].actor.reference).toBe(`Patient/${alice.id}`);
    // The patient may not edit Slots: the booking made it busy for them.
    expect((await read(`Slot/${slot.id}`, aliceMember.headers)).status).toBe('busy');
    const put = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Slot/${slot.id}`,
      headers: { ...aliceMember.headers, 'content-type': FHIR_JSON },
      payload: { ...(await read(`Slot/${slot.id}`)), status: 'free' },
    });
    expect(put.statusCode).toBe(403);
    const own = await t.app.inject({ url: '/fhir/R4/Appointment?status=booked', headers: aliceMember.headers });
    const ownPatients = (own.json().entry ?? []).flatMap(
      (e: { resource: { participant: { actor: { reference: string } }[] } }) =>
        e.resource.participant.map((p) => p.actor.reference).filter((r) => r.startsWith('Patient/')),
    );
    expect(new Set(ownPatients)).toEqual(new Set([`Patient/${alice.id}`]));
    const cancel = await operation(t, `Appointment/${mine.json().id}/$cancel`, [], aliceMember.headers);
    expect(cancel.statusCode).toBe(200);
    expect((await read(`Slot/${slot.id}`)).status).toBe('free');
  });

  it('a patient booking for another patient is refused and holds nothing', async () => {
    const [slot] = await freeSlots(t, f.schedule.id);
    const other = await book(slot.id, bob.id, aliceMember.headers);
    expect(other.statusCode).toBe(403);
    expect(other.json().resourceType).toBe('OperationOutcome');
    expect(other.body).toContain('only for themselves');
    // Through the appointment's participant instead of the parameter: the same.
    const viaDetails = await operation(
      t,
      'Appointment/$book',
      [
        {
          name: 'appointment',
          resource: {
            resourceType: 'Appointment',
            status: 'proposed',
            slot: [{ reference: `Slot/${slot.id}` }],
            participant: [{ actor: { reference: `Patient/${bob.id}` }, status: 'needs-action' }],
          },
        },
      ],
      aliceMember.headers,
    );
    expect(viaDetails.statusCode).toBe(403);
    expect((await read(`Slot/${slot.id}`)).status).toBe('free');
    // Nor can a patient cancel someone else's appointment: it is not theirs to see.
    const bobs = (await book(slot.id, bob.id)).json();
    const cancel = await operation(t, `Appointment/${bobs.id}/$cancel`, [], aliceMember.headers);
    expect(cancel.statusCode).toBe(404);
    expect((await read(`Slot/${slot.id}`)).status).toBe('busy');
  });

  it("an appointment written by hand that names someone else's slot cannot free it", async () => {
    const [slot] = await freeSlots(t, f.schedule.id);
    expect((await book(slot.id, bob.id)).statusCode).toBe(201);
    const forged = await createAs(
      t,
      {
        resourceType: 'Appointment',
        status: 'booked',
        start: slot.start,
        end: new Date(Date.parse(slot.start) + 30 * 60_000).toISOString(),
        slot: [{ reference: `Slot/${slot.id}` }],
        participant: [{ actor: { reference: `Patient/${alice.id}` }, status: 'accepted' }],
      },
      aliceMember.headers,
    );
    const cancel = await operation(t, `Appointment/${forged.id}/$cancel`, [], aliceMember.headers);
    expect(cancel.statusCode).toBe(200);
    expect((await read(`Slot/${slot.id}`)).status).toBe('busy');
  });
});
