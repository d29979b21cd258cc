// An Appointment that stops holding its time frees its Slots, however it was written: $cancel, or
// a plain PUT, PATCH or Bundle entry setting its status (hl7.org/fhir/R4/appointment.html#status).
// A storage update rule (storage/types.ts: UpdateRule), so the Slots change in the update's transaction.
import type { Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import type { UpdateRule } from '../storage/types.js';
import { slotIdsOf, type AppointmentResource } from './appointments.js';
import { freeSlots } from './slots.js';

/** Statuses of an appointment that no longer holds its slots. */
export const RELEASING_STATUSES = ['cancelled', 'noshow', 'entered-in-error'];

const releases = (a: Resource | undefined) =>
  RELEASING_STATUSES.includes((a as AppointmentResource | undefined)?.status ?? '');

/**
 * When an update turns an Appointment cancelled, noshow or entered-in-error, the busy Slots it
 * named (before or now) turn free, unless another active appointment holds them (freeSlots). An
 * appointment that was already in one of those statuses frees nothing: editing a cancelled
 * appointment's note leaves the slots as they are. The Slots are the server's to keep, as for
 * $cancel: freed once the caller was allowed to write the appointment.
 */
export const appointmentReleasesSlots: UpdateRule = {
  resourceType: 'Appointment',
  applies: releases,
  async afterUpdate(repo: Repository, written: Resource, previous: Resource | undefined): Promise<void> {
    if (releases(previous)) return;
    const slots = new Set([
      ...(previous ? slotIdsOf(previous as AppointmentResource) : []),
      ...slotIdsOf(written as AppointmentResource),
    ]);
    await freeSlots(repo.asServer(), [...slots], written.id as string);
  },
};
