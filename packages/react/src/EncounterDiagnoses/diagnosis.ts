/**
 * An encounter's diagnosis, recorded both ways FHIR R4 links them: a Condition with the
 * encounter-diagnosis category and the encounter (hl7.org/fhir/R4/condition.html), and an entry in
 * Encounter.diagnosis pointing at it (hl7.org/fhir/R4/encounter-definitions.html#Encounter.diagnosis).
 * One transaction writes both, the Encounter only if it is still the version read.
 */
import type { Bundle, CodeableConcept, Condition, Encounter, Reference } from '@hearth/core';

export const ENCOUNTER_DIAGNOSIS: CodeableConcept = {
  coding: [
    {
      system: 'http://terminology.hl7.org/CodeSystem/condition-category',
      code: 'encounter-diagnosis',
      display: 'Encounter Diagnosis',
    },
  ],
};

const CONFIRMED = {
  coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-ver-status', code: 'confirmed' }],
};
const ACTIVE = {
  coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }],
};

export function diagnosisTransaction(
  encounter: Encounter,
  code: CodeableConcept,
  recorder: Reference | undefined,
  now: string,
  newId: () => string,
): Bundle {
  const fullUrl = `urn:uuid:${newId()}`;
  const condition: Condition = {
    resourceType: 'Condition',
    clinicalStatus: ACTIVE,
    verificationStatus: CONFIRMED,
    category: [ENCOUNTER_DIAGNOSIS],
    code,
    subject: encounter.subject as Reference,
    encounter: { reference: `Encounter/${encounter.id}` },
    recordedDate: now,
    ...(recorder ? { recorder } : {}),
  };
  const updated: Encounter = {
    ...encounter,
    diagnosis: [
      ...(encounter.diagnosis ?? []),
      { condition: { reference: fullUrl }, rank: (encounter.diagnosis?.length ?? 0) + 1 },
    ],
  };
  return {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [
      { fullUrl, resource: condition, request: { method: 'POST', url: 'Condition' } },
      {
        resource: updated,
        request: {
          method: 'PUT',
          url: `Encounter/${encounter.id}`,
          ...(encounter.meta?.versionId ? { ifMatch: `W/"${encounter.meta.versionId}"` } : {}),
        },
      },
    ],
  };
}
