// Appointment/{id}/$cancel: the Appointment turns cancelled and its Slots free, in one transaction
// (the Slots by the update rule of release.ts).
import { conflict, fail, OperationOutcomeError, unprocessable, type Resource } from '@hearth/core';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { Repository } from '../storage/repository.js';
import type { AppointmentResource } from './appointments.js';
import { APPOINTMENT_CANCEL } from './definitions.js';
import { readParameters } from './parameters.js';

/** Statuses after which an appointment is history, not something to cancel. */
const FINISHED = ['fulfilled', 'noshow', 'entered-in-error', 'checked-in'];

/** Writes an Appointment if still at `versionId`; a concurrent change is a 409. */
export async function writeAppointmentAt(
  tx: Repository,
  appointment: AppointmentResource,
  versionId: number,
): Promise<Resource> {
  const { meta: _meta, ...rest } = appointment;
  try {
    return (await tx.updateResource(rest as AppointmentResource, { ifMatch: versionId })).resource;
  } catch (e) {
    if (e instanceof OperationOutcomeError && e.status === 412) {
      fail(conflict(`Appointment/${appointment.id as string} was changed meanwhile; read it again`));
    }
    throw e;
  }
}

export async function cancelAppointment(repo: Repository, id: string, reason: string | undefined): Promise<Resource> {
  const read = await repo.readResource('Appointment', id);
  const appointment = read.resource as AppointmentResource;
  if (appointment.status === 'cancelled') return appointment;
  if (FINISHED.includes(appointment.status)) {
    fail(
      unprocessable(`Appointment/${id} is ${appointment.status}: it can no longer be cancelled`, 'Appointment.status'),
    );
  }
  // The update frees the Slots in its own transaction (release.ts), as a plain PUT of the status would.
  return writeAppointmentAt(
    repo,
    { ...appointment, status: 'cancelled', ...(reason ? { cancelationReason: { text: reason } } : {}) },
    read.versionId,
  );
}

export function cancelOperation(): OperationRegistration {
  return {
    definition: APPOINTMENT_CANCEL,
    handler: async (input) => {
      const params = readParameters(input, 'Appointment/$cancel', ['reason']);
      return jsonResult(await cancelAppointment(input.context.repo, input.target.id as string, params.get('reason')));
    },
  };
}
