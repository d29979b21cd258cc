// Appointment/{id}/$reschedule: the Appointment moves to another free Slot; the new slot turns
// busy (version-checked like $book), the old one free, in one transaction.
import { fail, unprocessable, type Resource } from '@hearth/core';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { Repository } from '../storage/repository.js';
import {
  bookableSlot,
  scheduleParticipants,
  slotIdsOf,
  slotTimes,
  type AppointmentResource,
  type ScheduleResource,
} from './appointments.js';
import { writeAppointmentAt } from './cancel.js';
import { APPOINTMENT_RESCHEDULE } from './definitions.js';
import { readParameters, referenceParam } from './parameters.js';
import { freeSlots, writeSlotAt, type SlotResource } from './slots.js';

const MOVABLE = ['proposed', 'pending', 'booked'];

export async function rescheduleAppointment(
  repo: Repository,
  id: string,
  slotId: string,
  now = Date.now(),
): Promise<Resource> {
  const read = await repo.readResource('Appointment', id);
  const appointment = read.resource as AppointmentResource;
  if (!MOVABLE.includes(appointment.status)) {
    fail(
      unprocessable(
        `Appointment/${id} is ${appointment.status}: only a booked appointment can move`,
        'Appointment.status',
      ),
    );
  }
  const oldSlots = slotIdsOf(appointment);
  if (oldSlots.includes(slotId)) return appointment;
  const target = await bookableSlot(repo, slotId, now);
  // The actors of the old schedule give way to those of the new one; other participants stay.
  const oldActors = new Set<string>();
  for (const sid of oldSlots) {
    const [row] = await repo.readResources('Slot', [sid]);
    const ref = (row?.resource as SlotResource | undefined)?.schedule?.reference;
    const scheduleId = ref?.split('/')[1];
    if (!scheduleId) continue;
    const [s] = await repo.readResources('Schedule', [scheduleId]);
    for (const a of (s?.resource as ScheduleResource | undefined)?.actor ?? [])
      if (a.reference) oldActors.add(a.reference);
  }
  const kept = appointment.participant.filter((p) => !p.actor?.reference || !oldActors.has(p.actor.reference));
  const added = scheduleParticipants(target.schedule).filter(
    (p) => !kept.some((k) => k.actor?.reference === p.actor?.reference),
  );
  return repo.withTransaction(async (tx) => {
    const server = tx.asServer();
    await writeSlotAt(
      server,
      { ...target.slot, status: 'busy' } as SlotResource,
      target.versionId,
      `Slot/${slotId} was just booked by someone else`,
    );
    const moved = await writeAppointmentAt(
      tx,
      { ...appointment, ...slotTimes(target.slot), participant: [...kept, ...added] },
      read.versionId,
    );
    await freeSlots(server, oldSlots, id);
    return moved;
  });
}

export function rescheduleOperation(): OperationRegistration {
  return {
    definition: APPOINTMENT_RESCHEDULE,
    handler: async (input) => {
      const params = readParameters(input, 'Appointment/$reschedule', ['slot']);
      const slot = referenceParam(params, 'slot', ['Slot'], true);
      return jsonResult(await rescheduleAppointment(input.context.repo, input.target.id as string, slot[1]));
    },
  };
}
