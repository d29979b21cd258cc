// The OperationDefinitions of Hearth's scheduling operations (docs/scheduling.md). $find and
// $book take their names from the Argonaut Scheduling guide's operations, with Hearth's parameters.
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import type { OperationDefinition } from '@hearth/core';
import { operationDefinition, param } from '../operations/definitions/build.js';

const url = (id: string) => `${HEARTH_FHIR_BASE}/OperationDefinition/${id}`;

export const SCHEDULE_GENERATE_SLOTS: OperationDefinition = operationDefinition({
  id: 'Schedule-generate-slots',
  url: url('Schedule-generate-slots'),
  name: 'ScheduleGenerateSlots',
  title: "Materialise a schedule's slots",
  code: 'generate-slots',
  description:
    "Creates the Slots of the Schedule's availability extension (https://hearth.dev/fhir/StructureDefinition/availability) over its planning horizon or the window given: free in working hours, busy-unavailable where an exception covers them. Idempotent: running it again creates nothing twice; after the rules change, future free and busy-unavailable slots are updated, created or removed to match; booked (busy) slots and slots not made by this operation are never touched, and no new slot overlaps them. One transaction.",
  levels: { instance: true },
  resource: ['Schedule'],
  affectsState: true,
  parameter: [
    param(
      'start',
      'in',
      '0..1',
      'dateTime',
      'Start of the window (default: the planning horizon start); never before now.',
    ),
    param(
      'end',
      'in',
      '0..1',
      'dateTime',
      'End of the window (default: the planning horizon end); at most 366 days after its start.',
    ),
    param('created', 'out', '1..1', 'integer', 'Slots created.'),
    param('updated', 'out', '1..1', 'integer', 'Slots whose status or comment changed.'),
    param('deleted', 'out', '1..1', 'integer', 'Future slots removed because the rules no longer give them.'),
    param('unchanged', 'out', '1..1', 'integer', 'Slots already as the rules give them.'),
    param(
      'skipped',
      'out',
      '1..1',
      'integer',
      'Planned slots left out because a booked or hand-made slot overlaps them.',
    ),
    param('start', 'out', '1..1', 'instant', 'The window generated: its start.'),
    param('end', 'out', '1..1', 'instant', 'The window generated: its end.'),
  ],
});

export const APPOINTMENT_FIND: OperationDefinition = operationDefinition({
  id: 'Appointment-find',
  url: url('Appointment-find'),
  name: 'AppointmentFind',
  title: 'Find free slots',
  code: 'find',
  description:
    'Searches free Slots, in start order, of active schedules matching the practitioner, location, service type or schedule given, starting within [start, end) and not in the past. The answer is a searchset Bundle of Slots (with their Schedules included) paged by _count and a next link.',
  levels: { type: true },
  resource: ['Appointment'],
  affectsState: false,
  parameter: [
    param('start', 'in', '1..1', 'dateTime', 'Earliest slot start (a date is its start, UTC).'),
    param('end', 'in', '1..1', 'dateTime', 'Slots start before this (a date includes its whole day, UTC).'),
    param('practitioner', 'in', '0..1', 'Reference', 'Practitioner or PractitionerRole: an actor of the schedule.'),
    param('location', 'in', '0..1', 'Reference', 'Location: an actor of the schedule.'),
    param('healthcare-service', 'in', '0..1', 'Reference', 'HealthcareService: an actor of the schedule.'),
    param(
      'service-type',
      'in',
      '0..*',
      'token',
      "The slot's service type (system|code or code); several: any of them.",
    ),
    param('schedule', 'in', '0..1', 'Reference', 'Only this Schedule.'),
    param('patient', 'in', '0..1', 'Reference', 'Who the slots are for; a patient signed in may name only themselves.'),
    param('_count', 'in', '0..1', 'integer', 'Slots per page (default 20, at most 1000).'),
    param(
      'return',
      'out',
      '1..1',
      'Bundle',
      'Searchset Bundle of free Slots (mode match) and their Schedules (mode include).',
    ),
  ],
});

const APPOINTMENT_DETAILS =
  'An Appointment whose details are kept (serviceType, appointmentType, reasonCode, description, comment, patientInstruction, extra participants); its status, start, end, slot and patient come from the booking.';

export const APPOINTMENT_BOOK: OperationDefinition = operationDefinition({
  id: 'Appointment-book',
  url: url('Appointment-book'),
  name: 'AppointmentBook',
  title: 'Book a slot',
  code: 'book',
  description:
    "Books a free Slot for a patient: the Appointment (status booked, the slot's times, the schedule's actors and the patient as participants) is created and the Slot marked busy in one transaction. The Slot's row is version-checked, so of concurrent bookings of one slot exactly one succeeds (201) and the others answer 409 with an OperationOutcome. A patient signed in books only for themselves.",
  levels: { type: true },
  resource: ['Appointment'],
  affectsState: true,
  parameter: [
    param('slot', 'in', '0..1', 'Reference', 'The Slot to book (else the appointment.slot).'),
    param(
      'patient',
      'in',
      '0..1',
      'Reference',
      'The Patient (else the patient participant of appointment; a patient signed in: themselves).',
    ),
    param('appointment', 'in', '0..1', 'Appointment', APPOINTMENT_DETAILS),
    param('return', 'out', '1..1', 'Appointment', 'The booked Appointment (201, Location its URL).'),
  ],
});

export const APPOINTMENT_CANCEL: OperationDefinition = operationDefinition({
  id: 'Appointment-cancel',
  url: url('Appointment-cancel'),
  name: 'AppointmentCancel',
  title: 'Cancel an appointment',
  code: 'cancel',
  description:
    'Sets the Appointment to cancelled (with the reason given) and frees its Slots, in one transaction. Cancelling a cancelled appointment changes nothing.',
  levels: { instance: true },
  resource: ['Appointment'],
  affectsState: true,
  parameter: [
    param('reason', 'in', '0..1', 'string', 'Why (Appointment.cancelationReason.text).'),
    param('return', 'out', '1..1', 'Appointment', 'The cancelled Appointment.'),
  ],
});

export const APPOINTMENT_RESCHEDULE: OperationDefinition = operationDefinition({
  id: 'Appointment-reschedule',
  url: url('Appointment-reschedule'),
  name: 'AppointmentReschedule',
  title: 'Move an appointment to another slot',
  code: 'reschedule',
  description:
    'Moves a booked Appointment to another free Slot: the new slot turns busy (version-checked, 409 when taken), the old one free, and the Appointment takes the new times, slot and schedule actors, in one transaction.',
  levels: { instance: true },
  resource: ['Appointment'],
  affectsState: true,
  parameter: [
    param('slot', 'in', '1..1', 'Reference', 'The free Slot to move to.'),
    param('return', 'out', '1..1', 'Appointment', 'The Appointment at its new time.'),
  ],
});
