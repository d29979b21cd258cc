import type { Logger } from '../platform/logger.js';
import type { WriteEvent, WriteListener } from '../storage/types.js';
import type { JobQueue } from '../jobs/queue.js';
import { AUTOMATION_SYSTEM } from '../bots/audit.js';
import type { ActiveSubscriptions } from './active.js';
import type { CriteriaPretest } from './prefilter.js';
import type { Broadcaster } from './broadcast.js';
import { EVALUATE_QUEUE } from './evaluate.js';
import type { ChangeEvent, Interaction } from './model.js';

/** Most changes one evaluation job carries. */
const MAX_CHANGES_PER_JOB = 50;
/** Larger resources are read again by the evaluation instead of riding in its job. */
const MAX_CARRIED_CONTENT = 16 * 1024;
/** Backoff of a failed queue insert: doubling from the first delay up to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;
/** On a graceful stop, how long queue inserts are retried before the changes are left to recovery. */
const DRAIN_LIMIT_MS = 5000;

/** A committed change, from a write event or read back from history by crash recovery (heartbeat.ts). */
export interface CommittedChange {
  interaction: Interaction;
  projectId: string;
  resourceType: string;
  id: string;
  versionId: number;
  /** The version replaced, when it was not a deletion. */
  previousVersionId?: number;
  lastUpdated: Date;
  /** The stored JSON; '' for a deletion. */
  content: string;
  /** An AuditEvent of a delivery or bot run (its write or deletion never triggers subscriptions: no loops). */
  automationAudit: boolean;
}

/** Whether a resource is an AuditEvent written by automation (bots/audit.ts). */
export function isAutomationAudit(resourceType: string, resource: unknown): boolean {
  if (resourceType !== 'AuditEvent' || !resource) {
    return false;
  }
  const subtype = (resource as { subtype?: { system?: string }[] }).subtype;
  return Array.isArray(subtype) && subtype.some((c) => c?.system === AUTOMATION_SYSTEM);
}

function fromWriteEvent(event: WriteEvent): CommittedChange {
  const { version, previous } = event;
  return {
    interaction: event.interaction,
    projectId: version.projectId,
    resourceType: version.resourceType,
    id: version.id,
    versionId: version.versionId,
    ...(previous && !previous.deleted ? { previousVersionId: previous.versionId } : {}),
    lastUpdated: version.lastUpdated,
    content: version.content,
    automationAudit: isAutomationAudit(version.resourceType, version.resource ?? previous?.resource),
  };
}

/** Changes not yet queued, and the earliest time any of them (or a window being recovered) starts. */
interface PendingBatch {
  since: Date;
}

/**
 * Hears every committed write (after the commit, never inside it) and queues an evaluation job for
 * each change a subscription of its project could be about. The write itself only pays for pushing
 * the event to a buffer: lookups and the queue insert happen on a later tick, batched. A failed
 * insert is retried until it succeeds; the heartbeat (heartbeat.ts) publishes the oldest change
 * not yet queued, so that another process re-queues it if this one dies first.
 */
export class SubscriptionListener {
  private buffer: WriteEvent[] = [];
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly pending = new Set<PendingBatch>();
  /** Wakes retries waiting on their backoff (graceful stop). */
  private readonly wakers = new Set<() => void>();
  private drainDeadline?: number;
  /** A stop gave up on some changes: they are left to crash recovery. */
  private leftUnqueued = false;

  constructor(
    private readonly active: ActiveSubscriptions,
    private readonly pretest: CriteriaPretest,
    private readonly jobs: Pick<JobQueue, 'sendMany'>,
    private readonly broadcaster: Pick<Broadcaster, 'publish'>,
    private readonly logger: Logger,
    private readonly batchWindowMs = 5,
  ) {}

  readonly onWrite: WriteListener = (events) => {
    for (const event of events) {
      this.buffer.push(event);
    }
    // A few milliseconds let concurrent writes share one queue insert and one evaluation job.
    this.timer ??= setTimeout(() => this.flushBuffer(), this.batchWindowMs);
  };

  /** The earliest change (or recovered window) this process has not queued yet; undefined when none. */
  oldestUnqueued(): Date | undefined {
    let oldest: Date | undefined;
    for (const event of this.buffer) {
      if (!oldest || event.version.lastUpdated < oldest) {
        oldest = event.version.lastUpdated;
      }
    }
    for (const batch of this.pending) {
      if (!oldest || batch.since < oldest) {
        oldest = batch.since;
      }
    }
    return oldest;
  }

  private flushBuffer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0) {
      const changes = batch.map(fromWriteEvent);
      const since = changes.reduce((a, c) => (c.lastUpdated < a ? c.lastUpdated : a), changes[0].lastUpdated);
      this.track(since, () => this.invalidateAndQueue(changes));
    }
  }

  /**
   * Runs `work` (which queues changes) until it succeeds, counting its changes as not queued
   * (from `since`) meanwhile. Crash recovery (heartbeat.ts) queues a dead process's window this way.
   */
  track(since: Date, work: () => Promise<void>): Promise<void> {
    const entry: PendingBatch = { since };
    this.pending.add(entry);
    const done = this.retrying(work).finally(() => this.pending.delete(entry));
    const settled = done.catch(() => {
      this.leftUnqueued = true;
    });
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
    return done;
  }

  private async retrying(work: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await work();
        return;
      } catch (err) {
        if (this.drainDeadline !== undefined && Date.now() > this.drainDeadline) {
          // Left to crash recovery: the heartbeat row stays (drain() reports it).
          this.logger.error({ err }, 'could not queue subscription evaluations before stopping');
          throw err;
        }
        this.logger.warn({ err, attempt }, 'could not queue subscription evaluations; retrying');
        const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
        await new Promise<void>((resolve) => {
          const wake = (): void => {
            clearTimeout(timer);
            this.wakers.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, this.drainDeadline === undefined ? delay : Math.min(delay, 200));
          this.wakers.add(wake);
        });
      }
    }
  }

  private async invalidateAndQueue(changes: CommittedChange[]): Promise<void> {
    const changedProjects = new Set(changes.filter((c) => c.resourceType === 'Subscription').map((c) => c.projectId));
    for (const projectId of changedProjects) {
      this.active.invalidate(projectId);
      await this.broadcaster.publish({ k: 'invalidate', p: projectId }).catch(() => undefined);
    }
    await this.queue(changes);
  }

  /** The one path from committed changes to evaluation jobs: drops those no subscription could fire on. */
  async queue(changes: CommittedChange[]): Promise<void> {
    const evaluated: ChangeEvent[] = [];
    for (const change of changes) {
      if (change.automationAudit || !(await this.mayFire(change))) {
        continue;
      }
      evaluated.push({
        projectId: change.projectId,
        resourceType: change.resourceType,
        id: change.id,
        versionId: change.versionId,
        ...(change.previousVersionId !== undefined ? { previousVersionId: change.previousVersionId } : {}),
        interaction: change.interaction,
        ...(change.content && change.content.length <= MAX_CARRIED_CONTENT ? { content: change.content } : {}),
      });
    }
    const jobs = [];
    for (let i = 0; i < evaluated.length; i += MAX_CHANGES_PER_JOB) {
      jobs.push({ data: { changes: evaluated.slice(i, i + MAX_CHANGES_PER_JOB) } });
    }
    await this.jobs.sendMany(EVALUATE_QUEUE, jobs);
  }

  /**
   * Whether a subscription of the project could fire on the change: one watches its type and
   * interaction, and (for creates and updates) the resource passes one's criteria pre-test. Changes
   * that cannot match any subscription never become jobs.
   */
  private async mayFire(change: CommittedChange): Promise<boolean> {
    const { projectId, resourceType, content } = change;
    const candidates = (await this.active.forType(projectId, resourceType)).filter(
      (s) => !s.interactions || s.interactions.has(change.interaction),
    );
    if (candidates.length === 0) {
      return false;
    }
    if (change.interaction === 'delete' || !content) {
      return true;
    }
    const lower = content.toLowerCase();
    for (const sub of candidates) {
      if (await this.pretest.mayMatch(projectId, resourceType, sub.query, lower)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Graceful stop: queues the buffer and waits for every insert, retrying failed ones for a few
   * seconds more. True when everything heard was queued; false leaves the rest to crash recovery.
   */
  async drain(): Promise<boolean> {
    this.drainDeadline = Date.now() + DRAIN_LIMIT_MS;
    for (const wake of [...this.wakers]) {
      wake();
    }
    this.flushBuffer();
    while (this.inFlight.size > 0) {
      await Promise.all([...this.inFlight]);
    }
    return !this.leftUnqueued;
  }
}
