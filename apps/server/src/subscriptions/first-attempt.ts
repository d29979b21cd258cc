import type { Logger } from '../platform/logger.js';
import type { JobAttempt, JobQueue, SendOptions } from '../jobs/queue.js';
import { deliver, type DeliveryDeps } from './deliver.js';
import { DELIVER_QUEUE, type DeliveryJob, type QueuedDelivery } from './evaluate.js';

export interface FirstAttemptDeps {
  delivery: DeliveryDeps;
  jobs: JobQueue;
  /** Delay before the first retry, in seconds; doubled each time (as the delivery queue's). */
  retryDelaySeconds: number;
  /**
   * How long the evaluation job waits for its first attempts. An attempt still unanswered then is
   * backed by a delivery job and finishes on its own, so a slow receiver holds an evaluation
   * worker (shared by all projects) for this long at most.
   */
  budgetMs: number;
  /** When that backing job runs if the attempt never reports (its process died): past the attempt's own time limit. */
  fallbackAfterMs: number;
  logger: Logger;
}

/**
 * Runs the first attempt of rest-hook deliveries inside the evaluation job, instead of queuing a
 * delivery job for each: a fired write then costs no job insert, fetch, completion or archive
 * of its own. Nothing is lost by it: the evaluation job completes only once each first attempt has
 * ended (delivered, or its retry job queued) or is backed by a queued job, so a process that dies
 * before then leaves the evaluation job to expire and run again (at least once, as before).
 * A failed first attempt queues a delivery job for the remaining attempts, with the delays the
 * delivery queue would have used (retryDelay, then doubling).
 */
export async function deliverFirstAttempts(deps: FirstAttemptDeps, items: QueuedDelivery[]): Promise<void> {
  if (items.length === 0) {
    return;
  }
  const retries: { data: DeliveryJob; options: SendOptions }[] = [];
  const pending = new Set<number>();
  // Set when the budget runs out: attempts ending after it are settled by backLateAttempt.
  let closed = false;
  const attempts = items.map((item, i) => {
    pending.add(i);
    return attemptOnce(deps, item);
  });
  const settled = attempts.map((attempt, i) =>
    attempt.then((ok) => {
      if (closed) {
        return;
      }
      pending.delete(i);
      const retry = ok ? undefined : retryOf(deps, items[i]);
      if (retry) {
        retries.push(retry);
      }
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, deps.budgetMs);
  });
  await Promise.race([Promise.all(settled), budget]);
  clearTimeout(timer);
  closed = true;
  const late = [...pending].map((i) => ({ item: items[i], attempt: attempts[i] }));
  await deps.jobs.sendMany(DELIVER_QUEUE, retries);
  await Promise.all(late.map(({ item, attempt }) => backLateAttempt(deps, item, attempt)));
}

/** One first attempt; false when it failed (already recorded as an AuditEvent by deliver()). */
async function attemptOnce(deps: FirstAttemptDeps, item: QueuedDelivery): Promise<boolean> {
  const attempt: JobAttempt = {
    id: 'inline',
    queue: DELIVER_QUEUE,
    retryCount: 0,
    retryLimit: item.options.retryLimit,
  };
  try {
    await deliver(deps.delivery, item.data, attempt);
    return true;
  } catch {
    return false;
  }
}

/** The delivery job for the attempts after a failed first one, or undefined when none remain. */
function retryOf(
  deps: FirstAttemptDeps,
  item: QueuedDelivery,
): { data: DeliveryJob; options: SendOptions } | undefined {
  const retryLimit = item.options.retryLimit;
  if (retryLimit < 1) {
    return undefined;
  }
  // Retries read the resource again as the author (as later attempts always have).
  const { content: _content, ...rest } = item.data;
  const base = deps.retryDelaySeconds;
  return {
    data: { ...rest, firstAttempt: 2 },
    options: {
      retryLimit: retryLimit - 1,
      // The delays pg-boss would have used: base * (1..2) after attempt 1, then doubling.
      startAfter: new Date(Date.now() + base * 1000 * (1 + Math.random())),
      retryDelaySeconds: base * 2,
    },
  };
}

/**
 * An attempt still unanswered when the budget ran out: a delivery job of the same attempt is queued
 * to start after the attempt's time limit, so it runs only if this process dies first. When the
 * attempt ends and its AuditEvent is written, the job is cancelled, and a failed attempt queues its
 * retry instead (a crash before then lets the job run: the attempt is made again and recorded).
 */
async function backLateAttempt(deps: FirstAttemptDeps, item: QueuedDelivery, attempt: Promise<boolean>): Promise<void> {
  const jobId = await deps.jobs.send(DELIVER_QUEUE, item.data, {
    retryLimit: item.options.retryLimit,
    startAfter: new Date(Date.now() + deps.fallbackAfterMs),
  });
  void attempt
    .then(async (ok) => {
      await deps.delivery.audits.settled();
      if (jobId) {
        await deps.jobs.cancel(DELIVER_QUEUE, jobId);
      }
      const retry = ok ? undefined : retryOf(deps, item);
      if (retry) {
        await deps.jobs.send(DELIVER_QUEUE, retry.data, retry.options);
      }
    })
    .catch((err: unknown) => {
      // The backing job stays queued and delivers again: at least once.
      deps.logger.warn({ err, subscription: item.data.subscriptionId }, 'could not settle a late first attempt');
    });
}
