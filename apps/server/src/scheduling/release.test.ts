/**
 * A cancelled appointment frees its slot however it was written: a plain PUT or PATCH of the
 * status, a transaction Bundle entry; not when another active appointment holds the slot, not
 * when the write is refused, and not when the appointment was already cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createAs, createScheduleFixture, FHIR_JSON, freeSlots, operation, type ScheduleFixture } from './testing.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let t: TestApp;
let f: ScheduleFixture;
let patient: { id: string };
let other: { id: string };

beforeAll(async () => {
  t = await createTestApp();
  f = await createScheduleFixture(t, undefined, 'Releaser');
  expect((await operation(t, `Schedule/${f.schedule.id}/$generate-slots`, [])).statusCode).toBe(200);
  patient = await createAs(t, { resourceType: 'Patient', name: [{ family: 'Plain' }] });
  other = await createAs(t, { resourceType: 'Patient', name: [{ family: 'Other' }] });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const read = async (ref: string): Promise<Json> =>
  (await t.app.inject({ url: `/fhir/R4/${ref}`, headers: t.authHeaders })).json();
const slotStatus = async (id: string) => (await read(`Slot/${id}`)).status as string;

async function book(slotId: string, patientId = patient.id): Promise<Json> {
  const res = await operation(t, 'Appointment/$book', [
    { name: 'slot', valueReference: { reference: `Slot/${slotId}` } },
    { name: 'patient', valueReference: { reference: `Patient/${patientId}` } },
  ]);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

function put(resource: Json, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'PUT',
    url: `/fhir/R4/${resource.resourceType as string}/${resource.id as string}`,
    headers: { ...t.authHeaders, 'content-type': FHIR_JSON, ...headers },
    payload: resource,
  });
}

async function nextFree(): Promise<{ id: string; start: string }> {
  const [slot] = await freeSlots(t, f.schedule.id);
  expect(slot).toBeDefined();
  return slot;
}

describe('an Appointment updated to a status that holds no slot', () => {
  it('PUT with status cancelled frees the slot, in the same write', async () => {
    const slot = await nextFree();
    const appointment = await book(slot.id);
    expect(await slotStatus(slot.id)).toBe('busy');
    const res = await put({ ...appointment, status: 'cancelled', cancelationReason: { text: 'By phone' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('cancelled');
    expect(await slotStatus(slot.id)).toBe('free');
    // The slot is bookable again.
    expect((await book(slot.id, other.id)).status).toBe('booked');
  });

  it('PATCH to noshow frees it too', async () => {
    const slot = await nextFree();
    const appointment = await book(slot.id);
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/fhir/R4/Appointment/${appointment.id}`,
      headers: { ...t.authHeaders, 'content-type': 'application/json-patch+json' },
      payload: [{ op: 'replace', path: '/status', value: 'noshow' }],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await slotStatus(slot.id)).toBe('free');
  });

  it('a transaction Bundle entry marking it entered-in-error frees the slot it named before, even if the entry drops it', async () => {
    const slot = await nextFree();
    const appointment = await book(slot.id);
    const { slot: _slot, meta: _meta, ...rest } = appointment;
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4',
      headers: { ...t.authHeaders, 'content-type': FHIR_JSON },
      payload: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: { ...rest, status: 'entered-in-error' },
            request: { method: 'PUT', url: `Appointment/${appointment.id}` },
          },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await slotStatus(slot.id)).toBe('free');
  });

  it('leaves the slot busy when another active appointment holds it', async () => {
    const slot = await nextFree();
    await book(slot.id, other.id);
    // Written by hand, naming the same slot.
    const second = await createAs(t, {
      resourceType: 'Appointment',
      status: 'booked',
      start: slot.start,
      end: new Date(Date.parse(slot.start) + 30 * 60_000).toISOString(),
      slot: [{ reference: `Slot/${slot.id}` }],
      participant: [{ actor: { reference: `Patient/${patient.id}` }, status: 'accepted' }],
    });
    const res = await put({ ...second, status: 'cancelled' });
    expect(res.statusCode).toBe(200);
    expect(await slotStatus(slot.id)).toBe('busy');
  });

  it('a refused update (stale If-Match) changes neither the appointment nor the slot', async () => {
    const slot = await nextFree();
    const appointment = await book(slot.id);
    const res = await put({ ...appointment, status: 'cancelled' }, { 'if-match': 'W/"99"' });
    expect(res.statusCode).toBe(412);
    expect((await read(`Appointment/${appointment.id}`)).status).toBe('booked');
    expect(await slotStatus(slot.id)).toBe('busy');
  });

  it('editing an appointment that was already cancelled frees nothing', async () => {
    const slot = await nextFree();
    const appointment = await book(slot.id);
    const cancelled = (await put({ ...appointment, status: 'cancelled' })).json();
    expect(await slotStatus(slot.id)).toBe('free');
    // Staff block the time by hand, without an appointment.
    const blocked = await put({ ...(await read(`Slot/${slot.id}`)), status: 'busy', comment: 'Blocked' });
    expect(blocked.statusCode).toBe(200);
    const edited = await put({ ...cancelled, comment: 'Patient will call back' });
    expect(edited.statusCode).toBe(200);
    expect(await slotStatus(slot.id)).toBe('busy');
  });

  it('other updates keep the slot: a booked appointment whose description changes', async () => {
    const slot = await nextFree();
    const appointment = await book(slot.id);
    const res = await put({ ...appointment, description: 'Bring the X-rays' });
    expect(res.statusCode).toBe(200);
    expect(await slotStatus(slot.id)).toBe('busy');
  });
});
