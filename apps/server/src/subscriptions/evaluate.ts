import { evalFhirPathBoolean, type Resource } from '@hearth/core';
import type { Logger } from '../platform/logger.js';
import { throwIfConnectionError, type Pool, type PoolClient } from '../platform/postgres.js';
import type { Repository } from '../storage/repository.js';
import type { ConditionalMatcher, SearchIndexer } from '../storage/types.js';
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
  /** Number of this job's first attempt (2 for the retries of a first attempt made in the evaluation job). */
  firstAttempt?: number;
}

/** Larger resources are read again by the delivery instead of riding in its job. */
const MAX_CARRIED_CONTENT = 16 * 1024;

export interface EvaluatorDeps {
  active: ActiveSubscriptions;
  pretest: CriteriaPretest;
  db: Pool;
  matcher: ConditionalMatcher;
  /** Indexes a deleted resource's last version for a moment, so criteria can be searched on it. */
  indexer: SearchIndexer;
  systemRepo: (projectId?: string) => Repository;
  members: MemberRepositories;
  jobs: JobQueue;
  broadcaster: Broadcaster;
  defaultMaxAttempts: number;
  logger: Logger;
  /**
   * Makes the first attempt of rest-hook deliveries in the evaluation job itself (first-attempt.ts);
   * without it, every delivery is queued as a job.
   */
  deliverFirst?: (deliveries: QueuedDelivery[]) => Promise<void>;
}

/** Criteria naming only ids (and result parameters): decided by matchesWithoutIndex alone. */
function isIdOnly(query: string): boolean {
  for (const [name] of new URLSearchParams(query)) {
    if (name !== '_id' && !['_count', '_sort', '_total', '_summary', '_elements'].includes(name)) {
      return false;
    }
  }
  return true;
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

/** Thrown to roll back the transaction a deleted resource was searched in; carries the result. */
class SearchedDeleted extends Error {
  constructor(readonly matched: Set<string>) {
    super('rolled back');
  }
}

/**
 * Which of `queries` the last version of a deleted resource matches. The deletion removed its
 * index rows, so for the length of one transaction that is always rolled back, the resource row
 * is marked live again and its last version indexed, and the queries run as searches there: the
 * criteria of a deletion mean exactly what they mean in a search of the resource before it.
 */
async function deletedResourceMatches(
  deps: EvaluatorDeps,
  change: ChangeEvent,
  last: Resource,
  queries: string[],
): Promise<Set<string>> {
  const client: PoolClient = await deps.db.connect();
  try {
    await client.query('BEGIN');
    const revived = await client.query(
      `UPDATE resource SET deleted = false, compartments = $4::text[]
       WHERE resource_type = $1 AND project_id = $2::uuid AND id = $3 AND deleted`,
      [change.resourceType, change.projectId, change.id, deps.indexer.compartmentsOf(last)],
    );
    const matched = new Set<string>();
    if (revived.rowCount === 1) {
      await deps.indexer.index(client, [
        {
          resourceType: change.resourceType,
          id: change.id,
          projectId: change.projectId,
          versionId: change.previousVersionId ?? 1,
          lastUpdated: new Date(last.meta?.lastUpdated ?? Date.now()),
          deleted: false,
          resource: last,
          content: JSON.stringify(last),
          compartments: [],
        },
      ]);
      const scope = { projectId: change.projectId, readProjects: [change.projectId] };
      for (const query of queries) {
        const ids = await deps.matcher.findIds(
          client,
          scope,
          change.resourceType,
          `${query}&_id=${encodeURIComponent(change.id)}`,
          1,
        );
        if (ids.includes(change.id)) {
          matched.add(query);
        }
      }
    }
    throw new SearchedDeleted(matched);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (err instanceof SearchedDeleted) {
      return err.matched;
    }
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Evaluates one committed change against the active subscriptions of its project and queues a
 * delivery for each that fires (websocket subscriptions are broadcast at once instead). A
 * subscription fires when its interaction filter allows the interaction, its criteria matches the
 * resource (the search runs in SQL, restricted to the resource's id, so criteria mean exactly
 * what they mean in a search), its FHIRPath filter holds with %current and %previous, and its
 * author may read the resource. A deletion is matched on its last version (see
 * deletedResourceMatches).
 */
/** Whether a subscription's author may see a change, and how (fields their policy hides removed). */
interface AuthorView {
  readable: boolean;
  redact?: (resource: Resource) => Resource;
}

export interface QueuedDelivery {
  sub: ActiveSubscription;
  data: DeliveryJob;
  options: { retryLimit: number };
}

/** Whether a resource matches a criteria query, by a search restricted to its id. */
type SearchMatches = (projectId: string, resourceType: string, query: string, id: string) => Promise<boolean>;

/**
 * Searches of one evaluation job, batched: the ids asked about one query within a tick are
 * searched together (`query&_id=a,b,c`), one statement instead of one per changed resource.
 */
function batchedSearch(deps: EvaluatorDeps): SearchMatches {
  const waiting = new Map<string, { ids: Map<string, ((hit: boolean) => void)[]>; fail: ((err: unknown) => void)[] }>();
  let scheduled = false;
  const run = async (key: string, ids: Map<string, ((hit: boolean) => void)[]>): Promise<void> => {
    const [projectId, resourceType, query] = JSON.parse(key) as [string, string, string];
    const scope = { projectId, readProjects: [projectId] };
    const list = [...ids.keys()];
    const found = new Set(
      await deps.matcher.findIds(
        deps.db,
        scope,
        resourceType,
        `${query}&_id=${list.map(encodeURIComponent).join(',')}`,
        list.length,
      ),
    );
    for (const [id, resolvers] of ids) {
      resolvers.forEach((resolve) => resolve(found.has(id)));
    }
  };
  const flush = (): void => {
    scheduled = false;
    const batches = [...waiting];
    waiting.clear();
    for (const [key, batch] of batches) {
      run(key, batch.ids).catch((err: unknown) => batch.fail.forEach((reject) => reject(err)));
    }
  };
  return (projectId, resourceType, query, id) =>
    new Promise<boolean>((resolve, reject) => {
      const key = JSON.stringify([projectId, resourceType, query]);
      let batch = waiting.get(key);
      if (!batch) {
        batch = { ids: new Map(), fail: [] };
        waiting.set(key, batch);
      }
      batch.ids.set(id, [...(batch.ids.get(id) ?? []), resolve]);
      batch.fail.push(reject);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}

async function evaluateChange(
  deps: EvaluatorDeps,
  change: ChangeEvent,
  searchMatches: SearchMatches,
): Promise<QueuedDelivery[]> {
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
    } catch (err) {
      throwIfConnectionError(err);
      return undefined;
    }
  };
  // The previous version is read only when something needs it: a deletion, or a FHIRPath filter.
  const needPrevious = change.interaction === 'delete' || candidates.some((c) => c.fhirPath);
  const [current, previous] = await Promise.all([
    change.interaction === 'delete'
      ? undefined
      : change.content
        ? (JSON.parse(change.content) as Resource)
        : readVersion(change.versionId),
    needPrevious ? readVersion(change.previousVersionId) : undefined,
  ]);
  const subject = current ?? previous;
  if (!subject) {
    return [];
  }

  // Criteria: a pre-test on the JSON text, then one search per distinct query, restricted to this id.
  let lower: string | undefined;
  const lowerText = (): string => (lower ??= JSON.stringify(subject).toLowerCase());
  // Deletions: the queries that need the index are searched together on the last version.
  let deletedMatches: Promise<Set<string>> | undefined;
  const deletedMatch = (query: string): Promise<boolean> => {
    deletedMatches ??= (async () => {
      const queries = [...new Set(candidates.map((c) => c.query))].filter((q) => !isIdOnly(q));
      const possible: string[] = [];
      for (const q of queries) {
        if (await deps.pretest.mayMatch(change.projectId, change.resourceType, q, lowerText())) {
          possible.push(q);
        }
      }
      return possible.length > 0 ? deletedResourceMatches(deps, change, subject, possible) : new Set<string>();
    })();
    return deletedMatches.then((set) => set.has(query));
  };
  const criteriaResults = new Map<string, Promise<boolean>>();
  const criteriaMatch = (query: string): Promise<boolean> => {
    let result = criteriaResults.get(query);
    if (!result) {
      if (change.interaction === 'delete') {
        result = isIdOnly(query)
          ? Promise.resolve(matchesWithoutIndex(query, change.id))
          : deletedMatch(query).catch((err: unknown) => {
              throwIfConnectionError(err);
              deps.logger.warn({ err, query }, 'subscription criteria could not be evaluated on a deletion');
              return false;
            });
      } else if (!query) {
        result = Promise.resolve(true);
      } else {
        result = deps.pretest
          .mayMatch(change.projectId, change.resourceType, query, lowerText())
          .then((possible) => possible && searchMatches(change.projectId, change.resourceType, query, change.id))
          .catch((err: unknown) => {
            // Criteria at fault count as no match; a lost connection fails the job, which runs
            // again (taken for no match, it dropped the notification of a write made before an outage).
            throwIfConnectionError(err);
            deps.logger.warn({ err, query }, 'subscription criteria could not be evaluated');
            return false;
          });
      }
      criteriaResults.set(query, result);
    }
    return result;
  };

  // Access: each author reads the version the notification carries, as themselves; what the
  // author's policy hides is hidden from what is delivered too.
  const views = new Map<string, Promise<AuthorView>>();
  const authorView = (sub: ActiveSubscription): Promise<AuthorView> => {
    const key = sub.author ?? '';
    let result = views.get(key);
    if (!result) {
      const versionId = current ? change.versionId : change.previousVersionId;
      result = (async (): Promise<AuthorView> => {
        if (!sub.author) {
          return { readable: true }; // Written by the server itself (no author): the project's own data.
        }
        try {
          const repo = await deps.members.forProfile(change.projectId, sub.author);
          const { access: guard, readProjects } = repo.scope;
          if (readProjects && !readProjects.includes(change.projectId)) {
            return { readable: false };
          }
          if (!guard) {
            return { readable: true }; // No access rules narrow what this member reads in the project.
          }
          guard.assertInteraction(change.resourceType, 'vread');
          // Rules that show only some rows: read the version as the author (404 when it is not among them).
          if (guard.readCondition(change.resourceType, 'vread', 'r', () => '$1') !== undefined) {
            await repo.readVersion(change.resourceType, change.id, String(versionId));
          }
          return guard.hidesFields(change.resourceType)
            ? { readable: true, redact: (resource) => guard.redact(resource) }
            : { readable: true };
        } catch (err) {
          throwIfConnectionError(err);
          return { readable: false };
        }
      })();
      views.set(key, result);
    }
    return result;
  };

  const fired: { sub: ActiveSubscription; view: AuthorView }[] = [];
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
      const view = await authorView(sub);
      if (!view.readable) {
        return;
      }
      fired.push({ sub, view });
    }),
  );

  const deliveries = fired.filter((f) => f.sub.channel !== 'websocket');
  const sockets = fired.filter((f) => f.sub.channel === 'websocket');
  await Promise.all(
    sockets.map(({ sub, view }) =>
      deps.broadcaster.publish({
        k: 'ws',
        s: sub.id,
        p: change.projectId,
        t: change.resourceType,
        i: change.id,
        v: current ? change.versionId : change.previousVersionId,
        x: change.interaction,
        ...(change.resendId ? { r: change.resendId } : {}),
        // Fields hidden from the author: the socket's process reads the version as the author.
        ...(view.redact && sub.author ? { a: sub.author } : {}),
      }),
    ),
  );
  // The first attempt carries the resource as its author was just found to be allowed to see it.
  const fullText = JSON.stringify(subject);
  return deliveries.map(({ sub, view }) => {
    const text = view.redact ? JSON.stringify(view.redact(subject)) : fullText;
    const content = text.length <= MAX_CARRIED_CONTENT ? text : undefined;
    const attempts = sub.maxAttempts ?? deps.defaultMaxAttempts;
    const data: DeliveryJob = { ...change, subscriptionId: sub.id, content };
    if (!content) {
      delete data.content;
    }
    delete data.onlySubscription;
    return { sub, data, options: { retryLimit: Math.max(0, attempts - 1) } };
  });
}

/** An evaluation job: the changes of one listener flush (or one $resend). */
export interface EvaluationJob {
  changes: ChangeEvent[];
}

/**
 * Evaluates a batch of changes; rest-hook deliveries make their first attempt here (when
 * deliverFirst is given), the others are queued in one statement. Returns how many fired.
 */
export async function evaluateChanges(deps: EvaluatorDeps, job: EvaluationJob | ChangeEvent): Promise<number> {
  const changes = 'changes' in job ? job.changes : [job];
  const searchMatches = batchedSearch(deps);
  const deliveries = (await Promise.all(changes.map((change) => evaluateChange(deps, change, searchMatches)))).flat();
  const inline = deps.deliverFirst ? deliveries.filter((d) => d.sub.channel === 'rest-hook') : [];
  const queued = deliveries.filter((d) => !inline.includes(d));
  await Promise.all([
    deps.jobs.sendMany(
      DELIVER_QUEUE,
      queued.map(({ data, options }) => ({ data, options })),
    ),
    inline.length > 0 ? deps.deliverFirst?.(inline) : undefined,
  ]);
  return deliveries.length;
}
