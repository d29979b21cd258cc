// What booking, cancelling and rescheduling share: reading the Slot and Schedule behind an
// Appointment, and the Appointment's participants and times from them.
import { conflict, fail, unprocessable, type Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import type { SlotResource } from './slots.js';

export interface Participant {
  actor?: { reference?: string; display?: string };
  status: string;
  required?: string;
  type?: unknown[];
}

export interface AppointmentResource extends Resource {
  resourceType: 'Appointment';
  id?: string;
  status: string;
  start?: string;
  end?: string;
  minutesDuration?: number;
  slot?: { reference: string }[];
  participant: Participant[];
  cancelationReason?: { text?: string };
  serviceType?: unknown[];
  [element: string]: unknown;
}

export interface ScheduleResource extends Resource {
  resourceType: 'Schedule';
  id: string;
  active?: boolean;
  actor?: { reference?: string; display?: string }[];
}

export interface BookableSlot {
  slot: SlotResource;
  versionId: number;
  schedule: ScheduleResource;
}

/** A Slot that can be booked now, with its Schedule, read by the caller (404 when it may not see them). */
export async function bookableSlot(repo: Repository, slotId: string, now: number): Promise<BookableSlot> {
  const read = await repo.readResource('Slot', slotId);
  const slot = read.resource as SlotResource;
  if (slot.status !== 'free') {
    fail(conflict(`Slot/${slotId} is not free (status ${slot.status})`, 'conflict', 'Slot.status'));
  }
  if (Date.parse(slot.start) <= now) fail(unprocessable(`Slot/${slotId} has already started`, 'Slot.start'));
  const scheduleId = /^Schedule\/([A-Za-z0-9\-.]{1,64})$/.exec(slot.schedule?.reference ?? '')?.[1];
  if (!scheduleId) fail(unprocessable(`Slot/${slotId} has no Schedule reference`, 'Slot.schedule'));
  const schedule = (await repo.readResource('Schedule', scheduleId)).resource as ScheduleResource;
  if (schedule.active === false) fail(unprocessable(`Schedule/${scheduleId} is not active`, 'Schedule.active'));
  return { slot, versionId: read.versionId, schedule };
}

/** The schedule's actors as accepted participants (the practitioner, the room...). */
export function scheduleParticipants(schedule: ScheduleResource): Participant[] {
  return (schedule.actor ?? [])
    .filter((a) => a.reference)
    .map((a) => ({
      actor: { reference: a.reference, ...(a.display ? { display: a.display } : {}) },
      status: 'accepted',
    }));
}

/** Times and slot of the Appointment from its Slot. */
export function slotTimes(slot: SlotResource): Pick<AppointmentResource, 'start' | 'end' | 'minutesDuration' | 'slot'> {
  return {
    start: slot.start,
    end: slot.end,
    minutesDuration: Math.round((Date.parse(slot.end) - Date.parse(slot.start)) / 60_000),
    slot: [{ reference: `Slot/${slot.id}` }],
  };
}

/** The Slot ids an Appointment holds. */
export function slotIdsOf(appointment: AppointmentResource): string[] {
  return (appointment.slot ?? [])
    .map((s) => /^Slot\/([A-Za-z0-9\-.]{1,64})$/.exec(s.reference ?? '')?.[1])
    .filter((id): id is string => id !== undefined);
}

/** The Patient participant of an Appointment ("Patient/{id}"). */
export function patientOf(appointment: AppointmentResource): string | undefined {
  return appointment.participant?.find((p) => p.actor?.reference?.startsWith('Patient/'))?.actor?.reference;
}
