/**
 * The medication administration record (MAR) for inpatient use, on R4 MedicationAdministration
 * (hl7.org/fhir/R4/medicationadministration.html): a dose given (status completed, with dose,
 * route, time and performer) or not given (status not-done, with the reason), each against the
 * MedicationRequest it fulfils (MedicationAdministration.request).
 */
import type { HearthClient, MedicationAdministration, MedicationRequest, Reference } from '@hearth/core';
import { ROUTES } from '../PrescribeForm/prescription.js';

export interface AdministrationDraft {
  given: boolean;
  doseValue?: number | string;
  doseUnit: string;
  /** SNOMED route code (one of ROUTES). */
  routeCode: string;
  /** When it was given (or due and not given): a FHIR dateTime. */
  time?: string;
  /** Why it was not given (status not-done). */
  reason: string;
}

/** A draft filled from the request's first dosage instruction (its dose, unit and route), now. */
export function draftFor(request: MedicationRequest, now = new Date()): AdministrationDraft {
  const dosage = request.dosageInstruction?.[0];
  const dose = dosage?.doseAndRate?.[0]?.doseQuantity;
  const route = dosage?.route?.coding?.find((c) => ROUTES.some((r) => r.code === c.code))?.code;
  return {
    given: true,
    doseValue: dose?.value,
    doseUnit: dose?.unit ?? dose?.code ?? '',
    routeCode: route ?? '26643006',
    time: now.toISOString(),
    reason: '',
  };
}

/** What is wrong with a draft, by field: a dose given needs a positive dose; not given needs a reason; a time not in the future. */
export function administrationErrors(draft: AdministrationDraft, now = new Date()): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!draft.time || Number.isNaN(new Date(draft.time).getTime())) {
    errors.time = 'Enter when it was given';
  } else if (new Date(draft.time).getTime() > now.getTime() + 5 * 60_000) {
    errors.time = 'An administration cannot be recorded in the future';
  }
  if (draft.given) {
    if (typeof draft.doseValue !== 'number' || !(draft.doseValue > 0)) errors.dose = 'Enter the dose given';
    if (!draft.doseUnit.trim()) errors.doseUnit = 'Enter the unit';
  } else if (!draft.reason.trim()) {
    errors.reason = 'Give the reason it was not given';
  }
  return errors;
}

/** The MedicationAdministration a draft records against its request. */
export function administrationResource(
  request: MedicationRequest,
  draft: AdministrationDraft,
  performer: Reference | undefined,
): MedicationAdministration {
  const route = ROUTES.find((r) => r.code === draft.routeCode);
  const resource: MedicationAdministration = {
    resourceType: 'MedicationAdministration',
    status: draft.given ? 'completed' : 'not-done',
    statusReason: draft.given ? undefined : [{ text: draft.reason.trim() }],
    medicationCodeableConcept: request.medicationCodeableConcept,
    medicationReference: request.medicationCodeableConcept ? undefined : request.medicationReference,
    subject: request.subject,
    context: request.encounter,
    effectiveDateTime: draft.time as string,
    performer: performer ? [{ actor: performer }] : undefined,
    request: { reference: `MedicationRequest/${request.id}` },
    dosage: draft.given
      ? {
          route: route ? { coding: [{ system: 'http://snomed.info/sct', ...route }], text: route.display } : undefined,
          dose: { value: draft.doseValue as number, unit: draft.doseUnit.trim() },
        }
      : undefined,
  } as MedicationAdministration;
  return JSON.parse(JSON.stringify(resource)) as MedicationAdministration;
}

/** A patient's administrations, newest first, grouped by the MedicationRequest they fulfil. */
export async function loadAdministrations(
  client: HearthClient,
  patientId: string,
): Promise<Map<string, MedicationAdministration[]>> {
  const found = (await client.searchResources(
    'MedicationAdministration',
    { subject: `Patient/${patientId}`, _sort: '-effective-time', _count: '500' },
    { cache: 'no-cache' },
  )) as MedicationAdministration[];
  const byRequest = new Map<string, MedicationAdministration[]>();
  for (const a of found) {
    const key = a.request?.reference ?? '';
    byRequest.set(key, [...(byRequest.get(key) ?? []), a]);
  }
  return byRequest;
}
