// The payer's answer to a claim as a ClaimResponse (hl7.org/fhir/R4/claimresponse.html), and the
// balance that remains. Per item, the adjudication holds the amount submitted, the amount eligible
// (submitted minus the adjustment written off) and the benefit (what the payer paid), all codes of
// terminology.hl7.org/CodeSystem/adjudication. balance = total - paid - adjustments. Each answer
// also gets its ExplanationOfBenefit (explanation-of-benefit.ts); the balance is counted from the
// ClaimResponses, the source of truth (docs/billing.md), and lists the EOBs of the active answers.
import {
  conflict,
  fail,
  unprocessable,
  type Claim,
  type ClaimResponse,
  type ClaimResponseItem,
  type ExplanationOfBenefit,
  type Money,
  type Task,
} from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import { ADJUDICATION, BILLING_TASK_SYSTEM, cents, compact, idOf, money, searchAll } from './common.js';
import { SUBMISSION_CODE } from './claim-submit.js';
import { checkExplainable, explanationOfBenefit } from './explanation-of-benefit.js';

export interface ItemAnswer {
  sequence: number;
  /** Cents. */
  paid: number;
  /** Cents written off. */
  adjustment: number;
  reason?: string;
}

export interface ResponseInput {
  outcome: 'complete' | 'partial' | 'error';
  disposition?: string;
  paymentDate?: string;
  items: ItemAnswer[];
}

export interface Balance {
  total: Money;
  paid: Money;
  adjustment: Money;
  balance: Money;
  responses: number;
  /** The EOBs of the claim's active answers, oldest first. */
  explanations: ExplanationOfBenefit[];
}

const category = (code: string) => ({ coding: [{ system: ADJUDICATION, code }] });

/** The checks of the answer against the claim: each item once, a claim item, no more than it billed with earlier answers. */
function checkAnswer(claim: Claim, input: ResponseInput, settled: Map<number, number>): void {
  const seen = new Set<number>();
  for (const [i, answer] of input.items.entries()) {
    const at = `item[${i}]`;
    const item = claim.item?.find((c) => c.sequence === answer.sequence);
    if (!item) fail(unprocessable(`Claim/${String(claim.id)} has no item ${answer.sequence}`, `${at}.sequence`));
    if (seen.has(answer.sequence)) fail(unprocessable(`Item ${answer.sequence} is answered twice`, `${at}.sequence`));
    seen.add(answer.sequence);
    const before = settled.get(answer.sequence) ?? 0;
    if (before + answer.paid + answer.adjustment > cents(item.net)) {
      fail(
        unprocessable(
          `Item ${answer.sequence}: paid and adjusted (${((before + answer.paid + answer.adjustment) / 100).toFixed(2)}, with earlier answers) exceed its net ${(cents(item.net) / 100).toFixed(2)}`,
          at,
        ),
      );
    }
  }
  if (input.outcome !== 'error' && input.items.length === 0) {
    fail(unprocessable('A complete or partial answer adjudicates at least one item', 'item'));
  }
}

export async function recordResponse(
  repo: Repository,
  claimId: string,
  input: ResponseInput,
  now = new Date(),
): Promise<{ claimResponse: ClaimResponse; explanationOfBenefit: ExplanationOfBenefit; balance: Balance }> {
  return repo.withTransaction(async (tx) => {
    const claim = (await tx.readResource<Claim>('Claim', claimId)).resource;
    if (claim.status !== 'active') {
      fail(
        conflict(
          `Claim/${claimId} is ${claim.status}: submit it before recording the payer's answer`,
          'business-rule',
          'Claim.status',
        ),
      );
    }
    checkAnswer(claim, input, (await settlement(tx, claim)).byItem);
    checkExplainable(claim);
    const currency = claim.total?.currency ?? 'USD';
    const item: ClaimResponseItem[] = input.items.map((a) => {
      const submitted = cents(claim.item?.find((c) => c.sequence === a.sequence)?.net);
      return {
        itemSequence: a.sequence,
        adjudication: [
          { category: category('submitted'), amount: money(submitted, currency) },
          compact({
            category: category('eligible'),
            amount: money(submitted - a.adjustment, currency),
            reason: a.reason ? { text: a.reason } : undefined,
          }),
          { category: category('benefit'), amount: money(a.paid, currency) },
        ],
      };
    });
    const paid = input.items.reduce((s, a) => s + a.paid, 0);
    const submitted = input.items.reduce(
      (s, a) => s + cents(claim.item?.find((c) => c.sequence === a.sequence)?.net),
      0,
    );
    const stamp = now.toISOString();
    const response = compact({
      resourceType: 'ClaimResponse',
      status: 'active',
      type: claim.type,
      use: 'claim',
      patient: claim.patient,
      created: stamp,
      insurer: claim.insurer,
      requestor: claim.provider,
      request: { reference: `Claim/${claimId}` },
      outcome: input.outcome,
      disposition: input.disposition,
      item: item.length ? item : undefined,
      total: item.length
        ? [
            { category: category('submitted'), amount: money(submitted, currency) },
            { category: category('benefit'), amount: money(paid, currency) },
          ]
        : undefined,
      payment:
        input.outcome === 'error'
          ? undefined
          : {
              type: {
                coding: [
                  {
                    system: 'http://terminology.hl7.org/CodeSystem/ex-paymenttype',
                    code: input.outcome === 'complete' ? 'complete' : 'partial',
                  },
                ],
              },
              date: input.paymentDate ?? stamp.slice(0, 10),
              amount: money(paid, currency),
            },
    }) as ClaimResponse;
    const claimResponse = (await tx.createResource(response)).resource;
    const eob = (await tx.createResource(explanationOfBenefit(claim, claimResponse))).resource;
    // The submission is answered.
    const tasks = await searchAll<Task>(
      tx,
      'Task',
      new URLSearchParams({ focus: `Claim/${claimId}`, code: `${BILLING_TASK_SYSTEM}|${SUBMISSION_CODE}` }).toString(),
    );
    for (const t of tasks.filter((t) => ['requested', 'received', 'accepted', 'in-progress'].includes(t.status))) {
      const { meta: _meta, ...task } = t;
      await tx.updateResource<Task>({
        ...task,
        status: input.outcome === 'error' ? 'failed' : 'completed',
        lastModified: stamp,
        output: [
          {
            type: { text: 'ClaimResponse' },
            valueReference: { reference: `ClaimResponse/${String(claimResponse.id)}` },
          },
        ],
      });
    }
    return { claimResponse, explanationOfBenefit: eob, balance: await claimBalance(tx, claim) };
  });
}

interface Settlement {
  paid: number;
  adjustment: number;
  responses: number;
  /** The ids of the active ClaimResponses, those with outcome error included (a denial is explained too). */
  active: Set<string>;
  /** Paid plus adjusted, in cents, by claim item sequence. */
  byItem: Map<number, number>;
}

/** What the claim's active ClaimResponses paid and adjusted; answers with outcome error count for nothing. */
async function settlement(repo: Repository, claim: Claim): Promise<Settlement> {
  const active = (
    await searchAll<ClaimResponse>(
      repo,
      'ClaimResponse',
      new URLSearchParams({ request: `Claim/${String(claim.id)}` }).toString(),
    )
  ).filter((r) => r.status === 'active');
  const responses = active.filter((r) => r.outcome !== 'error');
  const result: Settlement = {
    paid: 0,
    adjustment: 0,
    responses: responses.length,
    active: new Set(active.map((r) => String(r.id))),
    byItem: new Map(),
  };
  for (const r of responses) {
    for (const item of r.item ?? []) {
      const amount = (code: string) =>
        item.adjudication.find((a) => a.category.coding?.some((c) => c.system === ADJUDICATION && c.code === code))
          ?.amount;
      const paid = cents(amount('benefit'));
      const submitted = amount('submitted');
      const eligible = amount('eligible');
      const adjustment = submitted && eligible ? cents(submitted) - cents(eligible) : 0;
      result.paid += paid;
      result.adjustment += adjustment;
      result.byItem.set(item.itemSequence, (result.byItem.get(item.itemSequence) ?? 0) + paid + adjustment);
    }
  }
  return result;
}

/** The balance of a claim: total - paid - adjustments. */
export async function claimBalance(repo: Repository, claim: Claim): Promise<Balance> {
  const { paid, adjustment, responses, active } = await settlement(repo, claim);
  const currency = claim.total?.currency ?? 'USD';
  const total = cents(claim.total);
  // The EOBs of the active answers; one whose answer was withdrawn (not active) is left out.
  const explanations = (
    await searchAll<ExplanationOfBenefit>(
      repo,
      'ExplanationOfBenefit',
      new URLSearchParams({ claim: `Claim/${String(claim.id)}` }).toString(),
    )
  )
    .filter((e) => e.status === 'active' && active.has(idOf(e.claimResponse?.reference, 'ClaimResponse') ?? ''))
    .sort((a, b) => a.created.localeCompare(b.created) || String(a.id).localeCompare(String(b.id)));
  return {
    total: money(total, currency),
    paid: money(paid, currency),
    adjustment: money(adjustment, currency),
    balance: money(total - paid - adjustment, currency),
    responses,
    explanations,
  };
}
