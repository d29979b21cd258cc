// Claim/{id}/$submit: a valid draft claim becomes active, its ChargeItems billed, and a Task records
// the submission (hl7.org/fhir/R4/task.html: focus the Claim, owner the payer) until the payer answers.
import { conflict, fail, type ChargeItem, type Claim, type Task } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import { BILLING_TASK_SYSTEM, idOf, searchAll } from './common.js';
import { claimProblems } from './claim-validate.js';

export const SUBMISSION_CODE = 'claim-submission';

export interface Submission {
  claim: Claim;
  task: Task;
}

export async function submitClaim(repo: Repository, claimId: string, now = new Date()): Promise<Submission> {
  return repo.withTransaction(async (tx) => {
    const claim = (await tx.readResource<Claim>('Claim', claimId)).resource;
    if (claim.status !== 'draft') {
      fail(
        conflict(
          `Claim/${claimId} is ${claim.status}: only a draft claim is submitted`,
          'business-rule',
          'Claim.status',
        ),
      );
    }
    const errors = (await claimProblems(tx, claim)).filter((i) => i.severity === 'error');
    if (errors.length) {
      fail({ resourceType: 'OperationOutcome', id: 'unprocessable-entity', issue: errors });
    }
    const stamp = now.toISOString();
    const { meta: _meta, ...rest } = claim;
    const active = (await tx.updateResource<Claim>({ ...rest, status: 'active' })).resource;
    // The encounter's billable charges are now on a claim.
    for (const encounter of new Set((claim.item ?? []).flatMap((i) => i.encounter ?? []).map((e) => e.reference))) {
      if (!idOf(encounter, 'Encounter')) continue;
      const charges = await searchAll<ChargeItem>(
        tx,
        'ChargeItem',
        new URLSearchParams({ context: encounter as string }).toString(),
      );
      for (const c of charges.filter((c) => c.status === 'billable')) {
        const { meta: _m, ...charge } = c;
        await tx.updateResource<ChargeItem>({ ...charge, status: 'billed' });
      }
    }
    const task = (
      await tx.createResource<Task>({
        resourceType: 'Task',
        status: 'requested',
        intent: 'order',
        code: {
          coding: [{ system: BILLING_TASK_SYSTEM, code: SUBMISSION_CODE, display: 'Claim submission' }],
          text: 'Claim submission',
        },
        description: `Claim/${claimId} submitted to ${claim.insurer?.display ?? claim.insurer?.reference ?? 'the payer'}`,
        focus: { reference: `Claim/${claimId}` },
        for: claim.patient,
        authoredOn: stamp,
        lastModified: stamp,
        owner: claim.insurer,
        requester: claim.provider,
      })
    ).resource;
    return { claim: active, task };
  });
}
