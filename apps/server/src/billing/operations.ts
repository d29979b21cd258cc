// The billing operations (docs/billing.md), each a thin handler over its module: the input read
// from the request, the work done through the caller's repository, the answer as FHIR.
import type { Claim, Parameters, ParametersParameter } from '@hearth/core';
import type { OperationRegistry } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { OperationInput } from '../operations/types.js';
import { captureCharges } from './charges.js';
import { buildClaim } from './claim-build.js';
import { renderClaimPdf } from './claim-pdf.js';
import { printedClaim } from './claim-print.js';
import { claimBalance, recordResponse, type Balance } from './claim-response.js';
import { submitClaim } from './claim-submit.js';
import { claimProblems, validationOutcome } from './claim-validate.js';
import {
  BUILD_CLAIM,
  CAPTURE_CHARGES,
  CLAIM_BALANCE,
  CLAIM_PDF,
  RECORD_RESPONSE,
  SUBMIT_CLAIM,
  VALIDATE_CLAIM,
} from './definitions.js';
import { buildOptions, noParameters, responseInput } from './parameters.js';

const parameters = (parameter: ParametersParameter[]): Parameters => ({ resourceType: 'Parameters', parameter });

/** The balance's amounts; with `explanations`, the claim's EOBs too ($balance). */
function balanceParameters(balance: Balance, explanations = false): ParametersParameter[] {
  return [
    { name: 'total', valueMoney: balance.total },
    { name: 'paid', valueMoney: balance.paid },
    { name: 'adjustment', valueMoney: balance.adjustment },
    { name: 'balance', valueMoney: balance.balance },
    { name: 'responses', valueInteger: balance.responses },
    ...(explanations ? balance.explanations.map((e) => ({ name: 'explanationOfBenefit', resource: e })) : []),
  ];
}

/** The instance's id: the registry only routes these operations at instance level. */
const idOf = (input: OperationInput) => input.target.id as string;

async function readClaim(input: OperationInput): Promise<Claim> {
  return (await input.context.repo.readResource<Claim>('Claim', idOf(input))).resource;
}

export function registerBillingOperations(registry: OperationRegistry): void {
  registry.register({
    definition: CAPTURE_CHARGES,
    handler: async (input) => {
      noParameters(input, '$capture-charges');
      const result = await captureCharges(input.context.repo, idOf(input));
      return jsonResult(
        parameters([
          ...result.chargeItems.map((c) => ({ name: 'chargeItem', resource: c })),
          { name: 'created', valueInteger: result.created },
          { name: 'updated', valueInteger: result.updated },
          { name: 'unchanged', valueInteger: result.unchanged },
          ...(result.issues.length
            ? [{ name: 'issues', resource: { resourceType: 'OperationOutcome' as const, issue: result.issues } }]
            : []),
        ]),
      );
    },
  });
  registry.register({
    definition: BUILD_CLAIM,
    handler: async (input) => jsonResult(await buildClaim(input.context.repo, idOf(input), buildOptions(input))),
  });
  registry.register({
    definition: VALIDATE_CLAIM,
    handler: async (input) => {
      noParameters(input, '$validate-claim');
      return jsonResult(validationOutcome(await claimProblems(input.context.repo, await readClaim(input))));
    },
  });
  registry.register({
    definition: SUBMIT_CLAIM,
    handler: async (input) => {
      noParameters(input, '$submit');
      const { claim, task } = await submitClaim(input.context.repo, idOf(input));
      return jsonResult(
        parameters([
          { name: 'claim', resource: claim },
          { name: 'submission', resource: task },
        ]),
      );
    },
  });
  registry.register({
    definition: RECORD_RESPONSE,
    handler: async (input) => {
      const { claimResponse, explanationOfBenefit, balance } = await recordResponse(
        input.context.repo,
        idOf(input),
        responseInput(input),
      );
      return jsonResult(
        parameters([
          { name: 'claimResponse', resource: claimResponse },
          { name: 'explanationOfBenefit', resource: explanationOfBenefit },
          ...balanceParameters(balance),
        ]),
      );
    },
  });
  registry.register({
    definition: CLAIM_BALANCE,
    handler: async (input) => {
      noParameters(input, '$balance');
      const balance = await claimBalance(input.context.repo, await readClaim(input));
      return jsonResult(parameters(balanceParameters(balance, true)));
    },
  });
  registry.register({
    definition: CLAIM_PDF,
    handler: async (input) => {
      noParameters(input, '$pdf');
      const repo = input.context.repo;
      const claim = await readClaim(input);
      const pdf = await renderClaimPdf(await printedClaim(repo, claim, await claimBalance(repo, claim)));
      return {
        body: pdf,
        contentType: 'application/pdf',
        headers: { 'content-disposition': `attachment; filename="claim-${String(claim.id)}.pdf"` },
      };
    },
  });
}
