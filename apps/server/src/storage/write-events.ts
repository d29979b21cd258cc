import type { WriteEvent, WriteListener } from './types.js';

/** What a module that reacts to writes is given: it may subscribe, not announce writes itself. */
export interface WriteSubscriptions {
  /** Hears of every committed write from now on; the function returned stops that. */
  subscribe(listener: WriteListener): () => void;
}

/**
 * The writes committed in this process, told to whoever subscribed (subscriptions, caches, reindex
 * jobs). Storage calls notify after each COMMIT; a listener's failure never fails the write.
 */
export class WriteEvents implements WriteSubscriptions {
  private readonly listeners = new Set<WriteListener>();

  subscribe(listener: WriteListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Called by the write path after the commit, never before. */
  notify(events: WriteEvent[]): void {
    for (const listener of this.listeners) {
      try {
        listener(events);
      } catch {
        // A listener's failure must never undo or fail a committed write.
      }
    }
  }
}
