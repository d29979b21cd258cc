import { evalFhirPathBoolean, type Resource } from '@hearth/core';
import type { Logger } from '../platform/logger.js';
import type { Queryable } from '../platform/postgres.js';
import type { Repository } from '../storage/repository.js';
import type { ConditionalMatcher } from '../storage/types.js';
import type { JobQueue } from '../jobs/queue.js';
import type { MemberRepositories } from '../jobs/actor.js';
import type { ActiveSubscriptions } from './active.js';
import type { Broadcaster } from './broadcast.js';
import type { ActiveSubscription, ChangeEvent } from './model.js';
import type { CriteriaPretest } from './prefilter.js';

export const EVALUATE_QUEUE = 'subscription-evaluate';
export const DELIVER_QUEUE = 'subscription-deliver';

/** A delivery job: one change for one subscription. */
export interface DeliveryJob extends ChangeEvent {
  subscriptionId: string;
  /** The resource as JSON, for the first attempt (later attempts read it again as the author). */
  content?: string;
}

/** Larger resources are read again by the delivery instead of riding in its job. */
const MAX_CARRIED_CONTENT = 16 * 1024;

export interface EvaluatorDeps {
  active: ActiveSubscriptions;
  pretest: CriteriaPretest;
  db: Queryable;
  matcher: ConditionalMatcher;
  systemRepo: (projectId?: string) => Repository;
  members: MemberRepositories;
  jobs: JobQueue;
  broadcaster: Broadcaster;
  defaultMaxAttempts: number;
  logger: Logger;
}

/** Search parameters that can be checked without the search index (criteria of a deleted resource). */
function matchesWithoutIndex(query: string, id: string): boolean {
  for (const [name, value] of new URLSearchParams(query)) {
    if (name === '_id') {
      if (!value.split(',').includes(id)) {
        return false;
      }
    } else if (!['_count', '_sort', '_total', '_summary', '_elements'].includes(name)) {
      return false;
    }
  }
  return true;
}

/**
 * Evaluates one committed change against the active subscriptions of its project and queues a
 * delivery for each that fires (websocket subscriptions are broadcast at once instead). A
 * subscription fires when its interaction filter allows the interaction, its criteria matches the
 * resource (the search runs in SQL, restricted to the resource's id, so criteria mean exactly
 * what they mean in a search), its FHIRPath filter holds with %current and %previous, and its
 * author may read the resource. A deletion is matched on its last version: criteria with search
 * parameters other than _id cannot be checked once the index rows are gone, so those do not fire
 * on deletes; FHIRPath filters (with %previous) are the way to select deletions.
 */
interface QueuedDelivery {
  data: DeliveryJob;
  options: { retryLimit: number };
}

async function evaluateChange(deps: EvaluatorDeps, change: ChangeEvent): Promise<QueuedDelivery[]> {
  let candidates = await deps.active.forType(change.projectId, change.resourceType);
  if (change.onlySubscription) {
    candidates = candidates.filter((s) => s.id === change.onlySubscription);
  }
  candidates = candidates.filter((s) => !s.interactions || s.interactions.has(change.interaction));
  if (candidates.length === 0) {
    return [];
  }
  const system = deps.systemRepo(change.projectId);
  const readVersion = async (versionId: number | undefined): Promise<Resource | undefined> => {
    if (!versionId) {
      return undefined;
    }
    try {
      return (await system.readVersion(change.resourceType, change.id, String(versionId))).resource;
    } catch {
      return undefined;
    }
  };
  // The previous version is read only when something needs it: a deletion, or a FHIRPath filter.
  const needPrevious = change.interaction === 'delete' || candidates.some((c) => c.fhirPath);
  const [current, previous] = await Promise.all([
    change.interaction === 'delete' ? undefined : readVersion(change.versionId),
    needPrevious ? readVersion(change.previousVersionId) : undefined,
  ]);
  const subject = current ?? previous;
  if (!subject) {
    return [];
  }

  // Criteria: a pre-test on the JSON text, then one search per distinct query, restricted to this id.
  let lower: string | undefined;
  const lowerText = (): string => (lower ??= JSON.stringify(subject).toLowerCase());
  const criteriaResults = new Map<string, Promise<boolean>>();
  const criteriaMatch = (query: string): Promise<boolean> => {
    let result = criteriaResults.get(query);
    if (!result) {
      if (change.interaction === 'delete') {
        result = Promise.resolve(matchesWithoutIndex(query, change.id));
      } else if (!query) {
        result = Promise.resolve(true);
      } else {
        const scope = { projectId: change.projectId, readProjects: [change.projectId] };
        result = deps.pretest
          .mayMatch(change.projectId, change.resourceType, query, lowerText())
          .then(async (possible) => {
            if (!possible) {
              return false;
            }
            const ids = await deps.matcher.findIds(
              deps.db,
              scope,
              change.resourceType,
              `${query}&_id=${encodeURIComponent(change.id)}`,
              1,
            );
            return ids.includes(change.id);
          })
          .catch((err: unknown) => {
            deps.logger.warn({ err, query }, 'subscription criteria could not be evaluated');
            return false;
          });
      }
      criteriaResults.set(query, result);
    }
    return result;
  };

  // Access: each author reads the version the notification carries, as themselves.
  const readable = new Map<string, Promise<boolean>>();
  const authorMayRead = (sub: ActiveSubscription): Promise<boolean> => {
    const key = sub.author ?? '';
    let result = readable.get(key);
    if (!result) {
      const versionId = current ? change.versionId : change.previousVersionId;
      result = (async () => {
        if (!sub.author) {
          return true; // Written by the server itself (no author): the project's own data.
        }
        try {
          const repo = await deps.members.forProfile(change.projectId, sub.author);
          const scope = repo.scope as typeof repo.scope & { access?: unknown };
          if (!scope.access && (!scope.readProjects || scope.readProjects.includes(change.projectId))) {
            return true; // No access rules narrow what this member reads in its own project.
          }
          await repo.readVersion(change.resourceType, change.id, String(versionId));
          return true;
        } catch {
          return false;
        }
      })();
      readable.set(key, result);
    }
    return result;
  };

  const fired: ActiveSubscription[] = [];
  await Promise.all(
    candidates.map(async (sub) => {
      if (!(await criteriaMatch(sub.query))) {
        return;
      }
      if (sub.fhirPath) {
        try {
          const ok = evalFhirPathBoolean(sub.fhirPath, subject, { current: current ?? {}, previous: previous ?? {} });
          if (!ok) {
            return;
          }
        } catch (err) {
          deps.logger.warn({ err, subscription: sub.id }, 'subscription FHIRPath filter failed');
          return;
        }
      }
      if (!(await authorMayRead(sub))) {
        return;
      }
      fired.push(sub);
    }),
  );

  const deliveries = fired.filter((s) => s.channel !== 'websocket');
  const sockets = fired.filter((s) => s.channel === 'websocket');
  await Promise.all(
    sockets.map((sub) =>
      deps.broadcaster.publish({
        k: 'ws',
        s: sub.id,
        p: change.projectId,
        t: change.resourceType,
        i: change.id,
        v: current ? change.versionId : change.previousVersionId,
        x: change.interaction,
      }),
    ),
  );
  // The first attempt carries the resource its author was just found to be allowed to read.
  const text = JSON.stringify(subject);
  const content = text.length <= MAX_CARRIED_CONTENT ? text : undefined;
  return deliveries.map((sub) => {
    const attempts = sub.maxAttempts ?? deps.defaultMaxAttempts;
    const data: DeliveryJob = { ...change, subscriptionId: sub.id, ...(content ? { content } : {}) };
    delete data.onlySubscription;
    return { data, options: { retryLimit: Math.max(0, attempts - 1) } };
  });
}

/** An evaluation job: the changes of one listener flush (or one $resend). */
export interface EvaluationJob {
  changes: ChangeEvent[];
}

/** Evaluates a batch of changes and queues all their deliveries in one statement; returns how many fired. */
export async function evaluateChanges(deps: EvaluatorDeps, job: EvaluationJob | ChangeEvent): Promise<number> {
  const changes = 'changes' in job ? job.changes : [job];
  const deliveries = (await Promise.all(changes.map((change) => evaluateChange(deps, change)))).flat();
  await deps.jobs.sendMany(DELIVER_QUEUE, deliveries);
  return deliveries.length;
}
