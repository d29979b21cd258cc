import type { HearthClient, Resource } from '@hearth/core';

/** How long a resolved reference is reused before it is asked for again. */
const KEEP_MS = 60_000;
/** References asked for within this window go out together. */
const WINDOW_MS = 5;
/** Ids per search (_id=a,b,c): keeps the URL well within the server's limit. */
const IDS_PER_SEARCH = 50;

interface Waiting {
  resolve: (resource: Resource | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Resolves references ('Patient/123') to their resources for display, batched: every reference
 * asked for in one render goes out as one `_id=a,b,c` search per type, and answers are kept for a
 * minute (a table of 20 rows naming 3 practitioners makes one request, not 20).
 */
export class ReferenceBatcher {
  private readonly kept = new Map<string, { at: number; value: Promise<Resource | undefined> }>();
  private readonly waiting = new Map<string, Map<string, Waiting[]>>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: HearthClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** The resource a 'Type/id' reference points to; undefined when it is gone or not readable. */
  load(reference: string): Promise<Resource | undefined> {
    const held = this.kept.get(reference);
    if (held && this.now() - held.at < KEEP_MS) {
      return held.value;
    }
    const match = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/.exec(reference);
    const value = match
      ? this.enqueue(match[1], match[2])
      : this.client.readReference<Resource>({ reference }).catch(() => undefined);
    this.kept.set(reference, { at: this.now(), value });
    // A failure is not kept: the next render asks again.
    value.catch(() => this.kept.delete(reference));
    return value;
  }

  /** Forgets a reference (after the resource changed). */
  forget(reference: string): void {
    this.kept.delete(reference);
  }

  private enqueue(type: string, id: string): Promise<Resource | undefined> {
    return new Promise((resolve, reject) => {
      const ofType = this.waiting.get(type) ?? new Map<string, Waiting[]>();
      this.waiting.set(type, ofType);
      ofType.set(id, [...(ofType.get(id) ?? []), { resolve, reject }]);
      this.timer ??= setTimeout(() => this.flush(), WINDOW_MS);
    });
  }

  private flush(): void {
    this.timer = undefined;
    const batches = [...this.waiting];
    this.waiting.clear();
    for (const [type, byId] of batches) {
      const ids = [...byId.keys()];
      for (let i = 0; i < ids.length; i += IDS_PER_SEARCH) {
        const slice = ids.slice(i, i + IDS_PER_SEARCH);
        this.client.searchResources(type as 'Patient', { _id: slice.join(','), _count: String(slice.length) }).then(
          (found) => {
            const byFoundId = new Map((found as Resource[]).map((r) => [r.id, r]));
            for (const id of slice) byId.get(id)?.forEach((w) => w.resolve(byFoundId.get(id)));
          },
          (error: unknown) => {
            for (const id of slice) byId.get(id)?.forEach((w) => w.reject(error));
          },
        );
      }
    }
  }
}

const batchers = new WeakMap<HearthClient, ReferenceBatcher>();

/** The client's batcher: every provider and component over one client shares what was resolved. */
export function referenceBatcherFor(client: HearthClient): ReferenceBatcher {
  let batcher = batchers.get(client);
  if (!batcher) {
    batcher = new ReferenceBatcher(client);
    batchers.set(client, batcher);
  }
  return batcher;
}
