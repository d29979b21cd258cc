// Who books: staff book for any patient they may see; a patient signed in (their membership's
// profile is a Patient) only for themselves. Access policies apply besides, to every read and write.
import { fail, forbiddenWith } from '@hearth/core';
import type { Repository } from '../storage/repository.js';

/** "Patient/{id}" when the caller is signed in as that patient, else undefined. */
export function callerPatient(repo: Repository): string | undefined {
  const ref = repo.scope.author?.reference;
  return ref?.startsWith('Patient/') ? ref : undefined;
}

/** The patient to act for: the one given, which a patient caller may only be themselves; by default the caller. */
export function patientFor(repo: Repository, given: string | undefined, operation: string): string | undefined {
  const self = callerPatient(repo);
  if (self && given !== undefined && given !== self) {
    fail(forbiddenWith(`${operation}: a patient may act only for themselves (${self}), not ${given}`));
  }
  return given ?? self;
}
