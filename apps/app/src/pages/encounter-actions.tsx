import { Button } from '@mantine/core';
import { getDisplayString, type Encounter, type ProfileResource, type Reference } from '@hearth/core';
import { OperationOutcomeAlert, useAction, useHearth, useProfile } from '@hearth/react';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';

/** The signed-in user as the clinician of record: their Practitioner (or RelatedPerson, Patient) profile. */
export function clinicianReference(profile: ProfileResource | undefined): Reference | undefined {
  if (!profile || !['Practitioner', 'RelatedPerson', 'Patient'].includes(profile.resourceType)) return undefined;
  return { reference: `${profile.resourceType}/${profile.id}`, display: getDisplayString(profile) };
}

/**
 * An ambulatory encounter in progress from now (hl7.org/fhir/R4/encounter.html), with the
 * signed-in practitioner as its primary performer.
 */
export function newEncounter(patientId: string, clinician: Reference | undefined, now: string): Encounter {
  return {
    resourceType: 'Encounter',
    status: 'in-progress',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
    // SNOMED CT is not loaded into Hearth's terminology: the type is text (its binding is an example).
    type: [{ text: 'Consultation' }],
    subject: { reference: `Patient/${patientId}` },
    period: { start: now },
    ...(clinician?.reference?.startsWith('Practitioner/') || clinician?.reference?.startsWith('RelatedPerson/')
      ? {
          participant: [
            {
              type: [
                {
                  coding: [
                    {
                      system: 'http://terminology.hl7.org/CodeSystem/v3-ParticipationType',
                      code: 'PPRF',
                      display: 'primary performer',
                    },
                  ],
                },
              ],
              individual: clinician,
            },
          ],
        }
      : {}),
  };
}

/** Starts an encounter for the patient and opens its charting page. */
export function StartEncounterButton({ patientId }: { patientId: string }): ReactNode {
  const client = useHearth();
  const profile = useProfile();
  const navigate = useNavigate();
  const { busy, error, run } = useAction();
  return (
    <div>
      <Button
        loading={busy}
        onClick={() =>
          run(async () => {
            const created = await client.createResource(
              newEncounter(patientId, clinicianReference(profile), new Date().toISOString()),
            );
            client.invalidateSearches('Encounter');
            navigate(`/Patient/${patientId}/encounter/${created.id}`);
          })
        }
      >
        Start encounter
      </Button>
      <OperationOutcomeAlert error={error} />
    </div>
  );
}
