// Claim/{id}/$validate-claim: what keeps a claim from being paid, found before the payer finds it.
// Each problem is an issue with the FHIRPath of the element it concerns. Errors block $submit;
// warnings (a provider without an NPI, more diagnoses than a CMS-1500 holds) do not.
import {
  createIssue,
  type Claim,
  type Coverage,
  type OperationOutcome,
  type OperationOutcomeIssue,
  type Patient,
  type Resource,
} from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import { cents, CLAIM_CODE_SYSTEMS, idOf, NPI } from './common.js';

type Issues = OperationOutcomeIssue[];

const error = (issues: Issues, text: string, where: string) => issues.push(createIssue('required', text, where));
const invalid = (issues: Issues, text: string, where: string) => issues.push(createIssue('business-rule', text, where));
const warn = (issues: Issues, text: string, where: string) =>
  issues.push(createIssue('business-rule', text, where, 'warning'));

/** A resource a claim points at, or undefined when it is missing or out of the caller's reach. */
async function readOptional<T extends Resource>(
  repo: Repository,
  ref: string | undefined,
  type: string,
): Promise<T | undefined> {
  const id = idOf(ref, type);
  if (!id) return undefined;
  const rows = await repo.readResources(type, [id]);
  return rows[0]?.resource as T | undefined;
}

function checkRequired(claim: Claim, issues: Issues): void {
  if (!['draft', 'active'].includes(claim.status)) {
    invalid(issues, `A ${claim.status} claim cannot be submitted`, 'Claim.status');
  }
  if (!claim.patient?.reference) error(issues, 'The claim names no patient', 'Claim.patient');
  if (!claim.provider?.reference) error(issues, 'The claim names no billing provider', 'Claim.provider');
  if (!claim.insurer?.reference) error(issues, 'The claim names no insurer (the payer)', 'Claim.insurer');
  if (!claim.type?.coding?.length) error(issues, 'The claim has no type', 'Claim.type');
  if (!claim.diagnosis?.length) error(issues, 'The claim has no diagnosis', 'Claim.diagnosis');
  if ((claim.diagnosis?.length ?? 0) > 12) {
    warn(issues, 'A CMS-1500 holds 12 diagnoses: the others will not be printed', 'Claim.diagnosis');
  }
  if (!claim.item?.length) error(issues, 'The claim has no items', 'Claim.item');
  if (!claim.total) error(issues, 'The claim has no total', 'Claim.total');
}

/** Each item priced and coded; each net its unit price times its quantity; the total their sum. */
function checkItems(claim: Claim, issues: Issues): void {
  const diagnoses = new Set((claim.diagnosis ?? []).map((d) => d.sequence));
  const currency = claim.total?.currency ?? 'USD';
  let sum = 0;
  for (const [i, item] of (claim.item ?? []).entries()) {
    const at = `Claim.item[${i}]`;
    const codings = item.productOrService?.coding ?? [];
    if (!codings.some((c) => c.code))
      error(issues, `Item ${item.sequence} has no procedure code`, `${at}.productOrService`);
    else if (!codings.some((c) => CLAIM_CODE_SYSTEMS.includes(c.system ?? ''))) {
      warn(issues, `Item ${item.sequence} is not coded in CPT or HCPCS`, `${at}.productOrService`);
    }
    const quantity = item.quantity?.value ?? 1;
    if (!(quantity > 0)) invalid(issues, `Item ${item.sequence} has no positive quantity`, `${at}.quantity`);
    if (!item.unitPrice)
      error(issues, `Item ${item.sequence} has no unit price (the fee schedule did not price it)`, `${at}.unitPrice`);
    if (!item.net) error(issues, `Item ${item.sequence} has no net amount`, `${at}.net`);
    if (item.unitPrice && item.net) {
      const expected = Math.round(cents(item.unitPrice) * quantity * (item.factor ?? 1));
      if (expected !== cents(item.net)) {
        invalid(
          issues,
          `Item ${item.sequence}: net ${(cents(item.net) / 100).toFixed(2)} is not unit price x quantity (${(expected / 100).toFixed(2)})`,
          `${at}.net`,
        );
      }
    }
    if (item.net) {
      sum += cents(item.net);
      if ((item.net.currency ?? currency) !== currency) {
        invalid(
          issues,
          `Item ${item.sequence} is in ${item.net.currency}, the claim in ${currency}`,
          `${at}.net.currency`,
        );
      }
    }
    if (!item.servicedDate && !item.servicedPeriod && !claim.billablePeriod?.start) {
      error(issues, `Item ${item.sequence} has no date of service`, `${at}.servicedDate`);
    }
    for (const [j, pointer] of (item.diagnosisSequence ?? []).entries()) {
      if (!diagnoses.has(pointer)) {
        invalid(
          issues,
          `Item ${item.sequence} points at diagnosis ${pointer}, which the claim does not have`,
          `${at}.diagnosisSequence[${j}]`,
        );
      }
    }
    if (diagnoses.size && !item.diagnosisSequence?.length) {
      error(issues, `Item ${item.sequence} points at no diagnosis`, `${at}.diagnosisSequence`);
    }
  }
  if (claim.total && claim.item?.length && sum !== cents(claim.total)) {
    invalid(
      issues,
      `The total ${(cents(claim.total) / 100).toFixed(2)} is not the sum of the items' net amounts (${(sum / 100).toFixed(2)})`,
      'Claim.total',
    );
  }
}

/** The dates of service: each item's, else the billable period's start. */
function serviceDates(claim: Claim): string[] {
  const dates = (claim.item ?? [])
    .map((i) => i.servicedDate ?? i.servicedPeriod?.start ?? claim.billablePeriod?.start)
    .filter((d): d is string => !!d)
    .map((d) => d.slice(0, 10));
  if (dates.length === 0 && claim.billablePeriod?.start) dates.push(claim.billablePeriod.start.slice(0, 10));
  return [...new Set(dates)].sort();
}

/** The focal coverage: present, active, the patient's, the insurer's, holding every date of service. */
async function checkCoverage(repo: Repository, claim: Claim, issues: Issues): Promise<void> {
  const insurance = claim.insurance ?? [];
  const index = insurance.findIndex((i) => i.focal);
  if (index < 0) {
    error(issues, 'The claim has no focal insurance', 'Claim.insurance');
    return;
  }
  const at = `Claim.insurance[${index}].coverage`;
  const coverage = await readOptional<Coverage>(repo, insurance[index].coverage?.reference, 'Coverage');
  if (!coverage) {
    error(issues, `The coverage ${insurance[index].coverage?.reference ?? ''} does not exist`, at);
    return;
  }
  const ref = `Coverage/${String(coverage.id)}`;
  if (coverage.status !== 'active') invalid(issues, `${ref} is ${coverage.status}, not active`, at);
  if (claim.patient?.reference && coverage.beneficiary?.reference !== claim.patient.reference) {
    invalid(issues, `${ref} does not cover ${claim.patient.reference}`, at);
  }
  if (claim.insurer?.reference && !coverage.payor?.some((p) => p.reference === claim.insurer?.reference)) {
    invalid(issues, `${claim.insurer.reference} is not a payer of ${ref}`, 'Claim.insurer');
  }
  if (!coverage.subscriberId && !coverage.identifier?.some((i) => i.value)) {
    error(issues, `${ref} has no member id (Coverage.subscriberId)`, at);
  }
  const start = coverage.period?.start?.slice(0, 10);
  const end = coverage.period?.end?.slice(0, 10);
  for (const date of serviceDates(claim)) {
    if ((start && date < start) || (end && date > end)) {
      invalid(issues, `${ref} is not in force on ${date} (period ${start ?? '…'} to ${end ?? '…'})`, at);
    }
  }
}

async function checkParties(repo: Repository, claim: Claim, issues: Issues): Promise<void> {
  if (claim.patient?.reference) {
    const patient = await readOptional<Patient>(repo, claim.patient.reference, 'Patient');
    if (!patient) error(issues, `${claim.patient.reference} does not exist`, 'Claim.patient');
    else {
      if (!patient.name?.length) error(issues, 'The patient has no name', 'Claim.patient');
      if (!patient.birthDate) error(issues, 'The patient has no birth date', 'Claim.patient');
    }
  }
  const provider = claim.provider?.reference;
  const type = provider?.split('/')[0] ?? '';
  if (provider && ['Practitioner', 'Organization'].includes(type)) {
    const resource = await readOptional<Resource>(repo, provider, type);
    if (!resource) error(issues, `${provider} does not exist`, 'Claim.provider');
    else if (!(resource.identifier as { system?: string }[] | undefined)?.some((i) => i.system === NPI)) {
      warn(issues, `${provider} has no NPI (identifier ${NPI})`, 'Claim.provider');
    }
  }
}

/** The problems of a claim (errors and warnings); empty when it can be submitted as it is. */
export async function claimProblems(repo: Repository, claim: Claim): Promise<OperationOutcomeIssue[]> {
  const issues: Issues = [];
  checkRequired(claim, issues);
  checkItems(claim, issues);
  await checkCoverage(repo, claim, issues);
  await checkParties(repo, claim, issues);
  return issues;
}

/** The $validate-claim answer: the problems, or one information issue saying the claim is valid. */
export function validationOutcome(issues: OperationOutcomeIssue[]): OperationOutcome {
  return {
    resourceType: 'OperationOutcome',
    issue: issues.length ? issues : [createIssue('informational', 'The claim is valid', undefined, 'information')],
  };
}
