/**
 * What SMART launch context a standalone browser sign-in still has to ask for (App Launch 2.0,
 * scopes-and-launch-context): a patient for launch/patient, then one of that patient's encounters
 * for launch/encounter. The answers are remembered on the Login: a SmartAppLaunch of the project as
 * its launch, and CHOSEN_CONTEXT_EXTENSION saying how far the choice went, which also tells a launch
 * chosen here from an EHR launch.
 */
import { splitScope } from './access/scopes.js';
import { CHOSEN_CONTEXT_EXTENSION, loginExtension, type Login } from './types.js';

export type ChosenContext = 'patient' | 'encounter';

/**
 * launch/patient (or launch/encounter, whose encounter is one of a patient's) by a user who is not
 * a patient, outside an EHR launch, with no patient chosen yet.
 */
export function needsPatientPick(login: Login): boolean {
  const scopes = splitScope(login.scope);
  return (
    (scopes.includes('launch/patient') || scopes.includes('launch/encounter')) &&
    !login.launch &&
    login.profileType !== 'Patient' &&
    login.membership !== undefined
  );
}

/**
 * launch/encounter outside an EHR launch, once the patient is known (chosen in the patient picker,
 * or the signed-in patient), and the encounter question not answered yet.
 */
export function needsEncounterPick(login: Login): boolean {
  const chosen = loginExtension(login, CHOSEN_CONTEXT_EXTENSION);
  const patientKnown = login.launch ? chosen === 'patient' : login.profileType === 'Patient';
  return (
    splitScope(login.scope).includes('launch/encounter') &&
    login.membership !== undefined &&
    chosen !== 'encounter' &&
    patientKnown
  );
}

/** The login having answered `chosen`, with the SmartAppLaunch that holds the answer when there is one. */
export function withChosenContext(login: Login, chosen: ChosenContext, launchId?: string): Login {
  return {
    ...login,
    ...(launchId ? { launch: { reference: `SmartAppLaunch/${launchId}` } } : {}),
    extension: [
      ...(login.extension ?? []).filter((e) => e.url !== CHOSEN_CONTEXT_EXTENSION),
      { url: CHOSEN_CONTEXT_EXTENSION, valueString: chosen },
    ],
  };
}
