// The OperationDefinitions of Hearth's billing operations (docs/billing.md), under its canonical base.
// R4 defines Claim/$submit at type level with the Claim in the body (hl7.org/fhir/R4/claim-operation-submit.html);
// Hearth's $submit acts on a stored Claim instead, so it has its own definition.
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import type { OperationDefinition } from '@hearth/core';
import { operationDefinition, param } from '../operations/definitions/build.js';

const url = (id: string) => `${HEARTH_FHIR_BASE}/OperationDefinition/${id}`;

export const CAPTURE_CHARGES: OperationDefinition = operationDefinition({
  id: 'Encounter-capture-charges',
  url: url('Encounter-capture-charges'),
  name: 'EncounterCaptureCharges',
  title: 'Capture the charges of an encounter',
  code: 'capture-charges',
  description:
    "Creates or updates one ChargeItem per billable code of the encounter's completed Procedures and of its CPT/HCPCS visit type (Encounter.type), with the quantity of services that carry the code, priced from the active ChargeItemDefinitions (the fee schedule). Idempotent: capturing again updates the encounter's unbilled ChargeItems, leaves billed ones alone and aborts those whose services are gone.",
  levels: { instance: true },
  resource: ['Encounter'],
  affectsState: true,
  parameter: [
    param('chargeItem', 'out', '0..*', 'ChargeItem', "The encounter's captured ChargeItems, as stored."),
    param('created', 'out', '1..1', 'integer', 'ChargeItems created.'),
    param(
      'updated',
      'out',
      '1..1',
      'integer',
      'ChargeItems updated (quantity, price or services changed, or aborted).',
    ),
    param('unchanged', 'out', '1..1', 'integer', 'ChargeItems already up to date or already billed.'),
    param(
      'issues',
      'out',
      '0..1',
      'OperationOutcome',
      'Warnings: services without a billable code, charges the fee schedule does not price.',
    ),
  ],
});

export const BUILD_CLAIM: OperationDefinition = operationDefinition({
  id: 'Encounter-build-claim',
  url: url('Encounter-build-claim'),
  name: 'EncounterBuildClaim',
  title: 'Build a claim from an encounter',
  code: 'build-claim',
  description:
    "Builds a draft professional Claim from the encounter: the patient, the provider (Encounter.serviceProvider or its first practitioner, or the provider parameter), the insurer from the patient's active Coverage, the diagnoses from the encounter-diagnosis Conditions and one item per billable ChargeItem, with unitPrice, net and total. Building again replaces the encounter's draft claim; an encounter whose claim was submitted answers 409.",
  levels: { instance: true },
  resource: ['Encounter'],
  affectsState: true,
  parameter: [
    param(
      'coverage',
      'in',
      '0..1',
      'Reference',
      "The Coverage to bill (default: the patient's first active one by order).",
    ),
    param(
      'provider',
      'in',
      '0..1',
      'Reference',
      'The billing provider (Practitioner, PractitionerRole or Organization).',
    ),
    param('return', 'out', '1..1', 'Claim', 'The draft Claim, as stored.'),
  ],
});

export const VALIDATE_CLAIM: OperationDefinition = operationDefinition({
  id: 'Claim-validate-claim',
  url: url('Claim-validate-claim'),
  name: 'ClaimValidateClaim',
  title: 'Check a claim before submission',
  code: 'validate-claim',
  description:
    "Checks that a Claim can be submitted: its required elements are present, each item's net is unitPrice x quantity and the total is the sum of the nets, the diagnosis pointers exist, and the focal Coverage is active, belongs to the patient and covers every date of service. Answers an OperationOutcome with one issue per problem, each with the FHIRPath of the element it concerns.",
  levels: { instance: true },
  resource: ['Claim'],
  affectsState: false,
  parameter: [
    param('return', 'out', '1..1', 'OperationOutcome', 'The problems found, or an information issue "valid".'),
  ],
});

export const SUBMIT_CLAIM: OperationDefinition = operationDefinition({
  id: 'Claim-submit-stored',
  url: url('Claim-submit-stored'),
  name: 'ClaimSubmitStored',
  title: 'Submit a stored claim',
  code: 'submit',
  description:
    "Submits a draft Claim: refuses it with 422 and the problems $validate-claim finds; otherwise, in one transaction, sets the Claim active, its ChargeItems billed, and records the submission as a Task (code claim-submission, focus the Claim, owner the insurer) that the payer's answer completes.",
  levels: { instance: true },
  resource: ['Claim'],
  affectsState: true,
  parameter: [
    param('claim', 'out', '1..1', 'Claim', 'The Claim, now active.'),
    param('submission', 'out', '1..1', 'Task', 'The submission record.'),
  ],
});

export const RECORD_RESPONSE: OperationDefinition = operationDefinition({
  id: 'Claim-record-response',
  url: url('Claim-record-response'),
  name: 'ClaimRecordResponse',
  title: "Record the payer's answer to a claim",
  code: 'record-response',
  description:
    "Records the payer's adjudication of a submitted Claim as a ClaimResponse: per item the amount paid (adjudication benefit) and the adjustment (submitted minus eligible), with the payment; derives the ExplanationOfBenefit of the answer (the claim's parties, coverage and lines with the answer's adjudication, totals and payment); completes the submission Task; all in one transaction. Answers the ClaimResponse, the ExplanationOfBenefit and the claim's balance.",
  levels: { instance: true },
  resource: ['Claim'],
  affectsState: true,
  parameter: [
    param('outcome', 'in', '0..1', 'code', 'complete (default), partial or error.'),
    param('disposition', 'in', '0..1', 'string', "The payer's message."),
    param('paymentDate', 'in', '0..1', 'date', 'When the payer paid (default today).'),
    param('item', 'in', '0..*', undefined, 'The adjudication of one claim item.', [
      param('sequence', 'in', '1..1', 'positiveInt', 'The Claim.item.sequence.'),
      param('paid', 'in', '1..1', 'decimal', 'The amount the payer paid for it.'),
      param('adjustment', 'in', '0..1', 'decimal', 'The amount written off (contractual adjustment).'),
      param('reason', 'in', '0..1', 'string', 'Why it was adjusted.'),
    ]),
    param('claimResponse', 'out', '1..1', 'ClaimResponse', 'The ClaimResponse, as stored.'),
    param(
      'explanationOfBenefit',
      'out',
      '1..1',
      'ExplanationOfBenefit',
      'The ExplanationOfBenefit of this answer, as stored (claim and claimResponse name its sources).',
    ),
    param('total', 'out', '1..1', 'Money', 'Claim.total.'),
    param('paid', 'out', '1..1', 'Money', 'Paid over all counted answers.'),
    param('adjustment', 'out', '1..1', 'Money', 'Adjusted over all counted answers.'),
    param('balance', 'out', '1..1', 'Money', 'What remains to collect: total - paid - adjustments.'),
    param('responses', 'out', '1..1', 'integer', 'The ClaimResponses counted.'),
  ],
});

export const CLAIM_BALANCE: OperationDefinition = operationDefinition({
  id: 'Claim-balance',
  url: url('Claim-balance'),
  name: 'ClaimBalance',
  title: 'The balance of a claim',
  code: 'balance',
  description:
    "The claim's total, what the payer paid and adjusted in its active ClaimResponses (those with outcome error count for nothing), and the balance: total - paid - adjustments. The ClaimResponses are the source of truth; the ExplanationOfBenefits of the active answers come with it, to show or link.",
  levels: { instance: true },
  resource: ['Claim'],
  affectsState: false,
  parameter: [
    param('total', 'out', '1..1', 'Money', 'Claim.total.'),
    param('paid', 'out', '1..1', 'Money', 'The sum of the adjudications of category benefit.'),
    param('adjustment', 'out', '1..1', 'Money', 'The sum of submitted minus eligible amounts.'),
    param('balance', 'out', '1..1', 'Money', 'total - paid - adjustment.'),
    param('responses', 'out', '1..1', 'integer', 'The ClaimResponses counted.'),
    param(
      'explanationOfBenefit',
      'out',
      '0..*',
      'ExplanationOfBenefit',
      "The EOBs of the claim's active answers (outcome error included), oldest first.",
    ),
  ],
});

export const CLAIM_PDF: OperationDefinition = operationDefinition({
  id: 'Claim-pdf',
  url: url('Claim-pdf'),
  name: 'ClaimPdf',
  title: 'A claim as a CMS-1500 style PDF',
  code: 'pdf',
  description:
    'The Claim printed on a CMS-1500 style form (application/pdf): payer, insured id, patient, diagnoses (box 21), six service lines a page (box 24) with codes, pointers, charges and units, the total charge, the amount paid and the billing provider.',
  levels: { instance: true },
  resource: ['Claim'],
  affectsState: false,
  parameter: [param('return', 'out', '1..1', 'Binary', 'The PDF.')],
});
