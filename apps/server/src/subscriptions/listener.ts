import type { Logger } from '../platform/logger.js';
import type { WriteEvent, WriteListener } from '../storage/types.js';
import type { JobQueue } from '../jobs/queue.js';
import { AUTOMATION_SYSTEM } from '../bots/audit.js';
import type { ActiveSubscriptions } from './active.js';
import type { CriteriaPretest } from './prefilter.js';
import type { Broadcaster } from './broadcast.js';
import { EVALUATE_QUEUE } from './evaluate.js';
import type { ChangeEvent } from './model.js';

const BATCH_WINDOW_MS = 5;
/** Most changes one evaluation job carries. */
const MAX_CHANGES_PER_JOB = 50;
/** Larger resources are read again by the evaluation instead of riding in its job. */
const MAX_CARRIED_CONTENT = 16 * 1024;

/** AuditEvents of deliveries and bot runs never trigger subscriptions (no delivery loops). */
function isAutomationAudit(event: WriteEvent): boolean {
  const resource = event.version.resource ?? event.previous?.resource;
  if (event.version.resourceType !== 'AuditEvent' || !resource) {
    return false;
  }
  const subtype = (resource as { subtype?: { system?: string }[] }).subtype;
  return Array.isArray(subtype) && subtype.some((c) => c?.system === AUTOMATION_SYSTEM);
}

/**
 * Hears every committed write (after the commit, never inside it) and queues an evaluation job for
 * each change a subscription of its project could be about. The write itself only pays for pushing
 * the event to a buffer: lookups and the queue insert happen on a later tick, batched.
 */
export class SubscriptionListener {
  private buffer: WriteEvent[] = [];
  private timer?: NodeJS.Timeout;
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly active: ActiveSubscriptions,
    private readonly pretest: CriteriaPretest,
    private readonly jobs: JobQueue,
    private readonly broadcaster: Broadcaster,
    private readonly logger: Logger,
  ) {}

  readonly onWrite: WriteListener = (events) => {
    for (const event of events) {
      this.buffer.push(event);
    }
    // A few milliseconds let concurrent writes share one queue insert and one evaluation job.
    this.timer ??= setTimeout(() => this.flushBuffer(), BATCH_WINDOW_MS);
  };

  private flushBuffer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) {
      return;
    }
    const done = this.flush(batch).catch((err: unknown) => {
      this.logger.error({ err, events: batch.length }, 'could not queue subscription evaluations');
    });
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  private async flush(events: WriteEvent[]): Promise<void> {
    const changedProjects = new Set(
      events.filter((e) => e.version.resourceType === 'Subscription').map((e) => e.version.projectId),
    );
    for (const projectId of changedProjects) {
      this.active.invalidate(projectId);
      await this.broadcaster.publish({ k: 'invalidate', p: projectId }).catch(() => undefined);
    }
    const changes: ChangeEvent[] = [];
    for (const event of events) {
      const { version } = event;
      if (isAutomationAudit(event) || !(await this.mayFire(event))) {
        continue;
      }
      changes.push({
        projectId: version.projectId,
        resourceType: version.resourceType,
        id: version.id,
        versionId: version.versionId,
        ...(event.previous && !event.previous.deleted ? { previousVersionId: event.previous.versionId } : {}),
        interaction: event.interaction,
        ...(version.content && version.content.length <= MAX_CARRIED_CONTENT ? { content: version.content } : {}),
      });
    }
    const jobs = [];
    for (let i = 0; i < changes.length; i += MAX_CHANGES_PER_JOB) {
      jobs.push({ data: { changes: changes.slice(i, i + MAX_CHANGES_PER_JOB) } });
    }
    await this.jobs.sendMany(EVALUATE_QUEUE, jobs);
  }

  /**
   * Whether a subscription of the project could fire on the change: one watches its type and
   * interaction, and (for creates and updates) the resource passes one's criteria pre-test. Changes
   * that cannot match any subscription never become jobs.
   */
  private async mayFire(event: WriteEvent): Promise<boolean> {
    const { projectId, resourceType, content } = event.version;
    const candidates = (await this.active.forType(projectId, resourceType)).filter(
      (s) => !s.interactions || s.interactions.has(event.interaction),
    );
    if (candidates.length === 0) {
      return false;
    }
    if (event.interaction === 'delete' || !content) {
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

  /** Waits for queued flushes (graceful stop). */
  async drain(): Promise<void> {
    this.flushBuffer();
    await Promise.all([...this.inFlight]);
  }
}
