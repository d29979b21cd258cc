// Fixtures of the scheduling tests: a practitioner's schedule with working hours, and a patient
// member whose access policy is what a patient portal would give.
import { availabilityExtension, type Availability, type Resource } from '@hearth/core';
import type { TestApp } from '../test/app.js';
import { addTestMember, type TestMember } from '../test/auth.js';

export const FHIR_JSON = 'application/fhir+json';

/** POSTs a resource as `headers` (the admin by default); throws unless 201. */
export async function createAs<T extends Resource>(
  t: TestApp,
  resource: T,
  headers: Record<string, string> = t.authHeaders,
): Promise<T & { id: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType}`,
    headers: { ...headers, 'content-type': FHIR_JSON },
    payload: resource,
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

/** Invokes an operation with a Parameters body. */
export function operation(
  t: TestApp,
  path: string,
  parameter: Record<string, unknown>[],
  headers: Record<string, string> = t.authHeaders,
) {
  return t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${path}`,
    headers: { ...headers, 'content-type': FHIR_JSON },
    payload: { resourceType: 'Parameters', parameter },
  });
}

/** Midnight UTC of the Monday at least a week from now: a week of future weekdays to book. */
export function nextMonday(now = Date.now()): number {
  const day = new Date(now + 7 * 86_400_000);
  const midnight = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate());
  const weekday = new Date(midnight).getUTCDay();
  return midnight + ((8 - weekday) % 7) * 86_400_000;
}

export const WEEKDAY_MORNINGS: Availability = {
  timeZone: 'UTC',
  slotMinutes: 30,
  availableTime: [{ daysOfWeek: ['mon', 'tue', 'wed', 'thu', 'fri'], startMinute: 9 * 60, endMinute: 12 * 60 }],
  notAvailableTime: [],
};

export interface ScheduleFixture {
  practitioner: Resource & { id: string };
  location: Resource & { id: string };
  schedule: Resource & { id: string };
  monday: number;
}

/** A practitioner at a location with a Schedule over the week of `nextMonday()` (Monday to Sunday). */
export async function createScheduleFixture(
  t: TestApp,
  availability: Availability = WEEKDAY_MORNINGS,
  family = 'Scheduler',
): Promise<ScheduleFixture> {
  const monday = nextMonday();
  const practitioner = await createAs(t, { resourceType: 'Practitioner', name: [{ family, given: ['Dana'] }] });
  const location = await createAs(t, { resourceType: 'Location', name: `${family} clinic room` });
  const schedule = await createAs(t, {
    resourceType: 'Schedule',
    active: true,
    actor: [{ reference: `Practitioner/${practitioner.id}` }, { reference: `Location/${location.id}` }],
    serviceType: [{ coding: [{ system: 'http://snomed.info/sct', code: '11429006', display: 'Consultation' }] }],
    planningHorizon: {
      start: new Date(monday).toISOString(),
      end: new Date(monday + 7 * 86_400_000).toISOString(),
    },
    extension: [availabilityExtension(availability)],
  } as Resource);
  return { practitioner, location, schedule, monday };
}

/** The free Slot ids of a schedule, in start order. */
export async function freeSlots(t: TestApp, scheduleId: string): Promise<{ id: string; start: string }[]> {
  const res = await t.app.inject({
    url: `/fhir/R4/Slot?schedule=Schedule/${scheduleId}&status=free&_sort=start&_count=1000`,
    headers: t.authHeaders,
  });
  return ((res.json().entry ?? []) as { resource: { id: string; start: string } }[]).map((e) => ({
    id: e.resource.id,
    start: e.resource.start,
  }));
}

/**
 * A patient signed in with a portal's policy: their own Patient and Appointments, and read-only
 * Slots, Schedules, Practitioners and Locations to choose from.
 */
export async function addPatientMember(t: TestApp, patient: Resource & { id: string }): Promise<TestMember> {
  const policy = await createAs(t, {
    resourceType: 'AccessPolicy',
    name: 'Patient portal',
    resource: [
      { resourceType: 'Patient', compartment: { reference: '%patient' } },
      { resourceType: 'Appointment', compartment: { reference: '%patient' } },
      { resourceType: 'Slot', readonly: true },
      { resourceType: 'Schedule', readonly: true },
      { resourceType: 'Practitioner', readonly: true },
      { resourceType: 'Location', readonly: true },
    ],
  } as Resource);
  return addTestMember(t.app, t.services, t.testProject.projectId, {
    profile: patient,
    membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
  });
}
