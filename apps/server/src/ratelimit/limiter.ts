import type { CounterStore } from './store.js';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

interface Entry {
  windowStart: number;
  /** The shared total at the last exchange with the store (this process's hits included). */
  shared: number;
  /** Hits of this process not yet added to the store. */
  pending: number;
  flushing?: Promise<void>;
  lastFlush: number;
}

/**
 * Fixed-window rate limiting shared across processes. Far below the limit, hits are counted
 * locally and added to the shared store in batches (at most every `flushMs`), so a busy server
 * does not write a counter per request; near the limit (and for `precise` buckets such as
 * sign-in) every hit goes to the store first, so processes together never exceed the limit by
 * more than the hits in flight.
 */
export class RateLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: CounterStore,
    private readonly options: { windowMs?: number; flushMs?: number; onError?: (err: unknown) => void } = {},
  ) {
    this.timer = setInterval(() => void this.sweep(), Math.max(1000, this.flushMs));
    this.timer.unref();
  }

  private get windowMs(): number {
    return this.options.windowMs ?? 60_000;
  }

  private get flushMs(): number {
    return this.options.flushMs ?? 250;
  }

  async hit(key: string, limit: number, precise = false, now = Date.now()): Promise<LimitDecision> {
    const windowStart = Math.floor(now / this.windowMs) * this.windowMs;
    let entry = this.entries.get(key);
    if (!entry || entry.windowStart !== windowStart) {
      entry = { windowStart, shared: 0, pending: 0, lastFlush: 0 };
      this.entries.set(key, entry);
    }
    entry.pending++;
    const estimate = entry.shared + entry.pending;
    const nearLimit = limit - estimate <= Math.max(5, Math.ceil(limit * 0.1));
    if (precise || nearLimit || entry.lastFlush === 0) {
      await this.flush(key, entry);
    } else if (now - entry.lastFlush >= this.flushMs && !entry.flushing) {
      void this.flush(key, entry);
    }
    const count = entry.shared + entry.pending;
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000)),
    };
  }

  private async flush(key: string, entry: Entry): Promise<void> {
    if (entry.flushing) {
      await entry.flushing;
      if (entry.pending === 0) {
        return;
      }
    }
    const delta = entry.pending;
    entry.pending = 0;
    entry.lastFlush = Date.now();
    entry.flushing = (async () => {
      try {
        entry.shared = await this.store.add(key, entry.windowStart, this.windowMs, delta);
      } catch (err) {
        // The store is down: count locally rather than refuse every request.
        entry.shared += delta;
        this.options.onError?.(err);
      } finally {
        entry.flushing = undefined;
      }
    })();
    await entry.flushing;
  }

  /** Flushes what is pending and forgets windows that ended. */
  private async sweep(now = Date.now()): Promise<void> {
    for (const [key, entry] of this.entries) {
      if (entry.windowStart + this.windowMs < now) {
        if (entry.pending > 0) {
          await this.flush(key, entry);
        }
        this.entries.delete(key);
      } else if (entry.pending > 0 && !entry.flushing) {
        await this.flush(key, entry);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sweep(Number.MAX_SAFE_INTEGER);
    await this.store.close();
  }
}
