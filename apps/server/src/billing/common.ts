// Small pieces every billing operation shares: searching through the caller's repository, money in
// cents (so that sums never drift by a float's rounding), and the code systems billing speaks.
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import type { Coding, Money, Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';

/** The most resources of one kind an operation reads for one encounter or claim. */
export const MAX_READ = 1000;

export const CPT = 'http://www.ama-assn.org/go/cpt';
// terminology.hl7.org's HCPCS Level II system; its OID form is also taken.
export const HCPCS = 'http://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets';
export const SNOMED = 'http://snomed.info/sct';
export const ICD10CM = 'http://hl7.org/fhir/sid/icd-10-cm';
export const NPI = 'http://hl7.org/fhir/sid/us-npi';
/** CPT and HCPCS are the codes a professional claim bills, in that order of preference. */
export const CLAIM_CODE_SYSTEMS = [CPT, HCPCS, 'urn:oid:2.16.840.1.113883.6.285'];
export const BILLING_CODE_SYSTEMS = [...CLAIM_CODE_SYSTEMS, SNOMED];
/** Marks the ChargeItems $capture-charges owns: identifier value `system|code`. */
export const CAPTURE_IDENTIFIER = `${HEARTH_FHIR_BASE}/sid/captured-charge`;
/** Codes of the Tasks that record submissions. */
export const BILLING_TASK_SYSTEM = `${HEARTH_FHIR_BASE}/CodeSystem/billing-task`;
export const ADJUDICATION = 'http://terminology.hl7.org/CodeSystem/adjudication';

/** The resources of one type matching a search, read through the caller's repository (its access rules apply). */
export async function searchAll<T extends Resource>(
  repo: Repository,
  resourceType: string,
  query: string,
): Promise<T[]> {
  const ids = await repo.findMatches(resourceType, query, MAX_READ);
  if (ids.length === 0) return [];
  const rows = await repo.readResources(resourceType, ids);
  return rows.map((r) => r.resource as T);
}

/** `Type/id` of a reference, when it is a relative reference to that type. */
export function idOf(reference: string | undefined, type: string): string | undefined {
  const m = /^([A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/.exec(reference ?? '');
  return m && m[1] === type ? m[2] : undefined;
}

/** A Money value in whole cents. */
export function cents(money: Money | undefined): number {
  return Math.round((money?.value ?? 0) * 100);
}

export function money(centsValue: number, currency = 'USD'): Money {
  return { value: centsValue / 100, currency };
}

/** Two codings name the same code (system and code). */
export function sameCode(a: Coding | undefined, b: Coding | undefined): boolean {
  return !!a && !!b && a.system === b.system && a.code === b.code;
}

/** An object without its undefined fields (so that stored resources hold no nulls). */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
