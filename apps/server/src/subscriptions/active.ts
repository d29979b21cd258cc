import type { Queryable } from '../platform/postgres.js';
import { parseStored } from '../storage/serialize.js';
import { parseSubscription, type ActiveSubscription } from './model.js';

interface Entry {
  loadedAt: number;
  byType: Map<string, ActiveSubscription[]>;
}

/**
 * The active subscriptions of each project, grouped by the resource type their criteria names,
 * kept per process. Writes of Subscription resources invalidate a project's list at once, in this
 * process (write listener) and in the others (broadcast); a list is never older than `maxAgeMs` (HEARTH_CACHE_MAX_AGE_MS: a missed broadcast heals by then).
 * This lets the write listener skip, at no cost, every change no subscription could be about.
 */
export class ActiveSubscriptions {
  private readonly byProject = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  private generation = 0;

  constructor(
    private readonly db: Queryable,
    private readonly maxAgeMs = 30_000,
  ) {}

  invalidate(projectId?: string): void {
    this.generation++;
    if (projectId) {
      this.byProject.delete(projectId);
      this.loading.delete(projectId);
    } else {
      this.byProject.clear();
      this.loading.clear();
    }
  }

  /** The project's active subscriptions on one resource type. */
  async forType(projectId: string, resourceType: string): Promise<ActiveSubscription[]> {
    return (await this.entry(projectId)).byType.get(resourceType) ?? [];
  }

  /** The resource types the project's active subscriptions watch. */
  async types(projectId: string): Promise<string[]> {
    return [...(await this.entry(projectId)).byType.keys()];
  }

  private async entry(projectId: string): Promise<Entry> {
    const cached = this.byProject.get(projectId);
    if (cached && Date.now() - cached.loadedAt < this.maxAgeMs) {
      return cached;
    }
    let pending = this.loading.get(projectId);
    if (!pending) {
      const generation = this.generation;
      pending = this.load(projectId).then((entry) => {
        if (this.loading.get(projectId) === pending) {
          this.loading.delete(projectId);
        }
        // A list loaded across an invalidation may be stale: serve it to this caller only.
        if (generation === this.generation) {
          this.byProject.set(projectId, entry);
        }
        return entry;
      });
      pending.catch(() => this.loading.delete(projectId));
      this.loading.set(projectId, pending);
    }
    return pending;
  }

  private async load(projectId: string): Promise<Entry> {
    const result = await this.db.query<{ content: string }>(
      `SELECT content FROM "Subscription" WHERE project_id = $1::uuid AND NOT deleted`,
      [projectId],
    );
    const byType = new Map<string, ActiveSubscription[]>();
    for (const row of result.rows) {
      const sub = parseSubscription(parseStored(row.content));
      if (!sub) {
        continue;
      }
      const list = byType.get(sub.resourceType) ?? [];
      list.push(sub);
      byType.set(sub.resourceType, list);
    }
    return { loadedAt: Date.now(), byType };
  }
}
