// FHIRcast in the app: the user's "FHIRcast enabled" setting (an extension on their profile
// resource) and the chart's Patient-open / Patient-close on the user's topic (docs/fhircast.md).
import { useEffect, useState } from 'react';
import { getExtensionValue, setExtension, type Extension, type HearthClient, type Resource } from '@hearth/core';

type WithExtensions = Resource & { extension?: Extension[] };
import { useHearth, useHearthContext, useResource } from '@hearth/react';

/** Extension (valueBoolean) on the user's profile resource: the app publishes chart context over FHIRcast. */
export const FHIRCAST_ENABLED_EXTENSION = 'https://hearth.dev/fhir/StructureDefinition/fhircast-enabled';

export function fhircastEnabled(profile: Resource | undefined): boolean {
  return getExtensionValue(profile as WithExtensions | undefined, FHIRCAST_ENABLED_EXTENSION) === true;
}

/** The profile with the setting changed (a copy). */
export function withFhircastEnabled(profile: Resource, enabled: boolean): Resource {
  return setExtension(structuredClone(profile) as WithExtensions, {
    url: FHIRCAST_ENABLED_EXTENSION,
    valueBoolean: enabled,
  });
}

/** The signed-in user's profile resource as stored (the session's copy may predate a setting change). */
export function useStoredProfile(): { profile: Resource | undefined; reload: () => void } {
  const { profile } = useHearthContext();
  const { data, reload } = useResource<Resource>(profile ? `${profile.resourceType}/${profile.id}` : undefined);
  return { profile: data, reload };
}

function patientContext(patientId: string) {
  return [{ key: 'patient', resource: { resourceType: 'Patient', id: patientId } }];
}

/**
 * While a patient's chart is open and the user has FHIRcast enabled: Patient-open on arrival and
 * Patient-close on leaving (or on moving to another patient). Resolves to the last publishing error.
 */
export function useFhircastPatientContext(patientId: string | undefined): unknown {
  const client = useHearth() as HearthClient;
  const { profile } = useStoredProfile();
  const enabled = fhircastEnabled(profile);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (!enabled || !patientId) {
      return undefined;
    }
    setError(undefined);
    const context = patientContext(patientId);
    client.fhircastPublish('Patient-open', context).catch(setError);
    return () => {
      client.fhircastPublish('Patient-close', context).catch(setError);
    };
  }, [client, enabled, patientId]);
  return error;
}
