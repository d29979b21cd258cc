import { badRequest, fail, notFoundWith, type CodeableConcept, type Coding } from '@hearth/core';
import type { OperationInput } from '../../operations/types.js';
import { findCodeSystem, findCodeSystemById, splitCanonical, type CodeSystemRow } from '../resolve.js';
import { scopeOf, type TerminologyDeps } from './context.js';

/**
 * The code system an operation works on: the instance (CodeSystem/{id}/$op), or the one a system
 * url (and version) names in the caller's scope. 404 when there is none.
 */
export async function targetCodeSystem(
  deps: TerminologyDeps,
  { context, target }: OperationInput,
  system: string | undefined,
  version: string | undefined,
  param = 'system',
): Promise<CodeSystemRow> {
  const scope = scopeOf(context);
  if (target.id) {
    const cs = await findCodeSystemById(deps.pool, scope, target.id);
    if (!cs) {
      fail(notFoundWith(`CodeSystem/${target.id} not found`));
    }
    if (system && system !== cs.url) {
      fail(badRequest(`System ${system} is not the url of CodeSystem/${target.id} (${cs.url})`, param));
    }
    return cs;
  }
  if (!system) {
    fail(badRequest(`Parameter ${param} is required`, param));
  }
  const canonical = splitCanonical(system);
  const cs = await findCodeSystem(deps.pool, scope, canonical.url, { version: version ?? canonical.version });
  if (!cs) {
    fail(notFoundWith(`CodeSystem ${system}${version ? ` version ${version}` : ''} not found`));
  }
  return cs;
}

/** The coding an operation is about: code (+ system), a coding, or (first of) a codeable concept. */
export function inputCodings(params: {
  code?: unknown;
  system?: unknown;
  coding?: unknown;
  codeableConcept?: unknown;
}): Coding[] {
  if (typeof params.code === 'string') {
    return [{ code: params.code, system: typeof params.system === 'string' ? params.system : undefined }];
  }
  if (params.coding) {
    return [params.coding as Coding];
  }
  if (params.codeableConcept) {
    return ((params.codeableConcept as CodeableConcept).coding ?? []).filter((c) => typeof c?.code === 'string');
  }
  return [];
}
