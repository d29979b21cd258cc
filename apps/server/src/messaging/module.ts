// Secure messaging on Communication (docs/communications.md): the $mark-read operation and the
// email to offline recipients. Threads, replies, receipts and unread counts are plain FHIR (the
// model in @hearth/core's messaging.ts; `read-by` is a platform search parameter).
import type { JobQueue } from '../jobs/queue.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { WriteSubscriptions } from '../storage/write-events.js';
import { markReadOperation } from './mark-read.js';
import { defineNotifyJobs, notifyOnWrite, type NotifyDeps } from './notify.js';

export interface MessagingModule {
  registerOperations(registry: OperationRegistry): void;
  /** Defines the notification queue and starts queuing a job per message sent (before the queue starts). */
  defineJobs(jobs: JobQueue, writes: WriteSubscriptions, deps: NotifyDeps): void;
}

export function createMessagingModule(): MessagingModule {
  return {
    registerOperations(registry) {
      registry.register(markReadOperation());
    },
    defineJobs(jobs, writes, deps) {
      defineNotifyJobs(jobs, deps);
      writes.subscribe(notifyOnWrite(jobs, deps.logger));
    },
  };
}
