// What an evaluation prepares before its first patient, kept for the next ones: each Library's
// parsed ELM and the libraries resolved by cql-execution (keyed by the Library versions read, so
// never stale), value set expansions (keyed by the projects whose terminology the caller sees),
// and a Measure's whole preparation for callers without access rules (keyed by the Measure's
// version and those projects). Writes of Measures, Libraries and terminology, in any process,
// drop what may depend on them (services.ts, storage/change-notices.ts); a process that missed
// such a notice reads again after maxAgeMs (HEARTH_CACHE_MAX_AGE_MS).

interface Entry<T> {
  value: Promise<T>;
  at: number;
}

export interface MeasureCacheOptions {
  /** How long a preparation or an expansion is used without being made again. */
  maxAgeMs: number;
  /** The most entries of each kind kept (the least recently made go first). */
  maxEntries?: number;
  now?: () => number;
}

/** One kind of entry: made once per key (concurrent callers share the making), bounded, aged. */
class Remembered<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number | undefined,
    private readonly now: () => number,
  ) {}

  get(key: string, make: () => Promise<T>): Promise<T> {
    const found = this.entries.get(key);
    const now = this.now();
    if (found && (this.maxAgeMs === undefined || now - found.at < this.maxAgeMs)) return found.value;
    const value = make();
    const entry = { value, at: now };
    this.entries.delete(key);
    this.entries.set(key, entry);
    // A failure (a 422 for a value set that cannot be expanded) is not kept: the next call tries again.
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return value;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

export class MeasureCache {
  /** By content (a Library's id and version, or a set of them): never stale, only bounded. */
  readonly byContent: Remembered<unknown>;
  /** By what may change under the same key (a Measure version's preparation, an expansion). */
  readonly byState: Remembered<unknown>;

  constructor(options: MeasureCacheOptions) {
    const now = options.now ?? Date.now;
    const max = options.maxEntries ?? 64;
    this.byContent = new Remembered(max, undefined, now);
    this.byState = new Remembered(max, options.maxAgeMs, now);
  }

  /** Content that a key names exactly (parsed ELM of `Library/id/versionId`). */
  content<T>(key: string, make: () => Promise<T>): Promise<T> {
    return this.byContent.get(key, make) as Promise<T>;
  }

  /** Something derived from stored resources that a write may change (an expansion, a preparation). */
  state<T>(key: string, make: () => Promise<T>): Promise<T> {
    return this.byState.get(key, make) as Promise<T>;
  }

  /** A Measure, Library or terminology resource was written: what may depend on it is made again. */
  forget(): void {
    this.byState.clear();
  }
}
