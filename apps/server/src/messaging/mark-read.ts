// Communication/{id}/$mark-read: the caller has read a thread (docs/communications.md). Every
// message of the thread addressed to the caller and not yet read by them gets the caller's read
// receipt (core's withReadReceipt: a read-receipt extension, and `received` once all recipients
// have read it), in one transaction through the caller's repository, so access policies decide
// what may be marked. Free of HTTP.
import {
  badRequest,
  fail,
  threadIdOf,
  withReadReceipt,
  type Communication,
  type OperationDefinition,
} from '@hearth/core';
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import { operationDefinition, param } from '../operations/definitions/build.js';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { Repository } from '../storage/repository.js';

export const COMMUNICATION_MARK_READ: OperationDefinition = operationDefinition({
  id: 'Communication-mark-read',
  url: `${HEARTH_FHIR_BASE}/OperationDefinition/Communication-mark-read`,
  name: 'CommunicationMarkRead',
  title: 'Mark a message thread read',
  code: 'mark-read',
  description:
    "Records that the caller (their profile) has read the thread that starts with this Communication: each message of the thread (this one and those whose partOf names it) that has the caller among its recipients and no read receipt of theirs gets one (extension https://hearth.dev/fhir/StructureDefinition/read-receipt with reader and time); a message's received is set once all its recipients have read it. One transaction, through the caller's access rules. A reply's id is refused: name the thread's first message.",
  levels: { instance: true },
  resource: ['Communication'],
  affectsState: true,
  parameter: [param('marked', 'out', '1..1', 'integer', 'How many messages got a read receipt of the caller.')],
});

/** Messages marked per statement; a thread with more unread is marked in several rounds of one transaction. */
const BATCH = 500;

/** Marks the thread `threadId` read by `reader` ("Patient/123") at `time`; returns how many messages changed. */
export async function markThreadRead(
  repo: Repository,
  threadId: string,
  reader: string,
  time: string,
): Promise<number> {
  const first = (await repo.readResource<Communication>('Communication', threadId)).resource;
  const owner = threadIdOf(first);
  if (owner !== threadId) {
    fail(
      badRequest(
        `Communication/${threadId} is a reply in the thread of Communication/${owner}: mark that thread read`,
        'id',
      ),
    );
  }
  return repo.withTransaction(async (tx) => {
    let marked = 0;
    const unread = `recipient=${encodeURIComponent(reader)}&_filter=${encodeURIComponent(`not (read-by eq ${reader})`)}`;
    const queries = [`_id=${threadId}&${unread}`, `part-of=Communication/${threadId}&${unread}`];
    for (const query of queries) {
      for (;;) {
        const ids = await tx.findMatches('Communication', query, BATCH);
        let changed = 0;
        for (const row of await tx.readResources('Communication', ids, 'update')) {
          const message = row.resource as Communication;
          const next = withReadReceipt(message, reader, time);
          if (next !== message) {
            await tx.updateResource(next, { ifMatch: row.versionId });
            changed++;
          }
        }
        marked += changed;
        // A full batch may leave more; a batch that changed nothing would only repeat itself.
        if (ids.length < BATCH || changed === 0) {
          break;
        }
      }
    }
    return marked;
  });
}

export function markReadOperation(clock: () => Date = () => new Date()): OperationRegistration {
  return {
    definition: COMMUNICATION_MARK_READ,
    handler: async (input) => {
      const reader = input.context.repo.scope.author?.reference;
      if (!reader || !/^(Patient|Practitioner|PractitionerRole|RelatedPerson)\//.test(reader)) {
        fail(badRequest('Only a signed-in person (a Patient, Practitioner or RelatedPerson profile) reads messages'));
      }
      const marked = await markThreadRead(input.context.repo, input.target.id as string, reader, clock().toISOString());
      return jsonResult({ resourceType: 'Parameters', parameter: [{ name: 'marked', valueInteger: marked }] });
    },
  };
}
