// The ExplanationOfBenefit of one payer answer (hl7.org/fhir/R4/explanationofbenefit.html): "the
// combination of the information in the Claim, the ClaimResponse and the payment", for the patient
// and the provider. Built from the two when $record-response stores the answer, in its transaction.
// The balance is counted from the ClaimResponses, not from these (docs/billing.md says why).
import {
  fail,
  unprocessable,
  type Claim,
  type ClaimResponse,
  type ExplanationOfBenefit,
  type ExplanationOfBenefitItem,
} from '@hearth/core';
import { compact } from './common.js';

/**
 * An EOB needs the payer (EOB.insurer 1..1), which a Claim may lack (Claim.insurer 0..1) when it
 * was made active by hand rather than by $submit. Its coverage a stored Claim always has (1..*).
 */
export function checkExplainable(claim: Claim): void {
  if (!claim.insurer?.reference) {
    fail(unprocessable(`Claim/${String(claim.id)} has no insurer: set Claim.insurer to the payer`, 'Claim.insurer'));
  }
}

/**
 * The EOB of `response` (stored, with its id) to `claim`: the claim's parties, coverage, care team,
 * diagnoses and the lines this answer adjudicated, each with the answer's adjudication; the answer's
 * totals, payment, outcome and disposition.
 */
export function explanationOfBenefit(claim: Claim, response: ClaimResponse): ExplanationOfBenefit {
  const answered = new Map((response.item ?? []).map((i) => [i.itemSequence, i.adjudication]));
  const item: ExplanationOfBenefitItem[] = (claim.item ?? [])
    .filter((i) => answered.has(i.sequence))
    .map(({ detail: _detail, ...line }) => ({ ...line, adjudication: answered.get(line.sequence) }));
  return compact({
    resourceType: 'ExplanationOfBenefit',
    status: 'active',
    type: claim.type,
    subType: claim.subType,
    use: 'claim',
    patient: claim.patient,
    billablePeriod: claim.billablePeriod,
    created: response.created,
    insurer: claim.insurer as ExplanationOfBenefit['insurer'],
    provider: claim.provider,
    facility: claim.facility,
    claim: { reference: `Claim/${String(claim.id)}` },
    claimResponse: { reference: `ClaimResponse/${String(response.id)}` },
    outcome: response.outcome,
    disposition: response.disposition,
    careTeam: claim.careTeam?.length ? claim.careTeam : undefined,
    diagnosis: claim.diagnosis?.length ? claim.diagnosis : undefined,
    insurance: (claim.insurance ?? []).map((i) =>
      compact({ focal: i.focal, coverage: i.coverage, preAuthRef: i.preAuthRef }),
    ),
    item: item.length ? item : undefined,
    total: response.total,
    payment: response.payment,
  }) as ExplanationOfBenefit;
}
