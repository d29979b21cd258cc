/**
 * The client's GET cache. Identical GETs in flight share one request, whatever the cache time;
 * a settled answer is kept for `cacheTime` ms. Failures are never kept. An entry invalidated
 * while its request is in flight still answers those already waiting, but no one after.
 */
interface CacheEntry {
  readonly promise: Promise<unknown>;
  /** When the answer arrived (epoch ms); undefined while in flight. */
  settledAt?: number;
}

export class ResponseCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(
    /** How long a settled answer is kept, in ms; 0 keeps answers only while in flight. */
    readonly cacheTime: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /**
   * The shared answer for `key`: the one in flight, or a fresh settled one, or a new one from
   * `load`. With `reload`, a new request is made whatever is held, and its answer replaces it.
   */
  fetch<T>(key: string, load: () => Promise<T>, reload = false): Promise<T> {
    if (!reload) {
      const held = this.entries.get(key);
      if (held && (held.settledAt === undefined || this.now() - held.settledAt < this.cacheTime)) {
        return held.promise as Promise<T>;
      }
    }
    const promise = load();
    const entry: CacheEntry = { promise };
    this.entries.set(key, entry);
    promise.then(
      () => {
        if (this.entries.get(key) !== entry) {
          return;
        }
        if (this.cacheTime > 0) {
          entry.settledAt = this.now();
        } else {
          this.entries.delete(key);
        }
      },
      () => {
        if (this.entries.get(key) === entry) {
          this.entries.delete(key);
        }
      },
    );
    return promise;
  }

  /** Holds a known answer (a resource just written) as if it had been read now. */
  set(key: string, value: unknown): void {
    if (this.cacheTime > 0) {
      this.entries.set(key, { promise: Promise.resolve(value), settledAt: this.now() });
    }
  }

  /** Whether a usable answer (in flight, or settled and fresh) is held for the key. */
  has(key: string): boolean {
    const held = this.entries.get(key);
    return held !== undefined && (held.settledAt === undefined || this.now() - held.settledAt < this.cacheTime);
  }

  /** Forgets the entries whose key matches. */
  invalidate(match: (key: string) => boolean): void {
    for (const key of [...this.entries.keys()]) {
      if (match(key)) {
        this.entries.delete(key);
      }
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
