// Appointment/$book: the Slot turns busy and the Appointment is created in one transaction. The
// Slot's update is version-checked under its row lock (storage/write.ts), so of concurrent
// bookings of one slot exactly one commits; the others answer 409.
import { badRequest, fail, getDisplayString, type Resource } from '@hearth/core';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { Repository } from '../storage/repository.js';
import {
  bookableSlot,
  patientOf,
  scheduleParticipants,
  slotTimes,
  type AppointmentResource,
  type Participant,
} from './appointments.js';
import { patientFor } from './caller.js';
import { APPOINTMENT_BOOK } from './definitions.js';
import { readParameters, referenceParam } from './parameters.js';
import { writeSlotAt, type SlotResource } from './slots.js';

/** The details of a given Appointment that a booking keeps; the rest comes from the slot. */
const KEPT_DETAILS = [
  'serviceCategory',
  'serviceType',
  'specialty',
  'appointmentType',
  'reasonCode',
  'reasonReference',
  'priority',
  'description',
  'comment',
  'patientInstruction',
  'basedOn',
] as const;

export interface BookRequest {
  slotId: string;
  patient: string;
  details?: AppointmentResource;
}

/** Books the slot for the patient; answers the stored Appointment. */
export async function bookSlot(repo: Repository, request: BookRequest, now = Date.now()): Promise<Resource> {
  const { slot, versionId, schedule } = await bookableSlot(repo, request.slotId, now);
  // The patient must exist and be visible to the caller (a patient sees only themselves).
  const patient = (await repo.readResource('Patient', request.patient.split('/')[1])).resource;
  const display = getDisplayString(patient);
  const details = request.details ?? ({} as Partial<AppointmentResource>);
  const participants: Participant[] = [
    {
      actor: { reference: request.patient, ...(display ? { display } : {}) },
      status: 'accepted',
      required: 'required',
    },
    ...scheduleParticipants(schedule),
  ];
  for (const p of details.participant ?? []) {
    const ref = p.actor?.reference;
    if (!ref || !participants.some((q) => q.actor?.reference === ref)) participants.push(p);
  }
  const appointment: AppointmentResource = {
    resourceType: 'Appointment',
    ...Object.fromEntries(KEPT_DETAILS.filter((k) => details[k] !== undefined).map((k) => [k, details[k]])),
    status: 'booked',
    ...slotTimes(slot),
    created: new Date(now).toISOString(),
    participant: participants,
  };
  if (!appointment.serviceType && slot.serviceType) appointment.serviceType = slot.serviceType;
  // Checked before the slot is taken, so an invalid Appointment is a 400, not a held slot.
  repo.check(appointment);
  return repo.withTransaction(async (tx) => {
    // The slot's status is the server's to keep: written without the caller's rules (a patient
    // may not edit Slots), only after the caller was allowed to read it, and in the same
    // transaction as the Appointment, which the caller's rules must allow.
    await writeSlotAt(
      tx.asServer(),
      { ...slot, status: 'busy' } as SlotResource,
      versionId,
      `Slot/${slot.id} was just booked by someone else`,
    );
    return (await tx.createResource(appointment)).resource;
  });
}

export function bookOperation(): OperationRegistration {
  return {
    definition: APPOINTMENT_BOOK,
    handler: async (input) => {
      const params = readParameters(input, 'Appointment/$book', ['slot', 'patient', 'appointment']);
      const { repo, fhirBase } = input.context;
      const details = params.resource('appointment') as AppointmentResource | undefined;
      if (details && details.resourceType !== 'Appointment') {
        fail(badRequest('Parameter appointment must be an Appointment', 'appointment'));
      }
      const slotRef = referenceParam(params, 'slot', ['Slot']) ?? slotOfDetails(details);
      const given = referenceParam(params, 'patient', ['Patient'])?.join('/') ?? (details && patientOf(details));
      const patient = patientFor(repo, given, 'Appointment/$book');
      if (!patient) fail(badRequest('Appointment/$book needs a patient (Patient/{id})', 'patient'));
      const booked = await bookSlot(repo, { slotId: slotRef[1], patient, details });
      return jsonResult(booked, 201, { location: `${fhirBase}Appointment/${booked.id as string}/_history/1` });
    },
  };
}

function slotOfDetails(details: AppointmentResource | undefined): [string, string] {
  const ref = details?.slot?.[0]?.reference;
  const m = ref ? /^Slot\/([A-Za-z0-9\-.]{1,64})$/.exec(ref) : null;
  if (!m) fail(badRequest('Appointment/$book needs a slot (Slot/{id}), as a parameter or appointment.slot', 'slot'));
  return ['Slot', m[1]];
}
