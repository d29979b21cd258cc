/**
 * A small per-process cache of loaded values (with the load in flight shared), each kept for
 * `ttlMs` at most; writes that may change a value clear the cache (see automation/module.ts).
 * Failed loads are not kept.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: Promise<V> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 1000,
  ) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && Date.now() - hit.at < this.ttlMs) {
      return hit.value;
    }
    const value = load();
    if (this.entries.size >= this.max) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.set(key, { at: Date.now(), value });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) {
        this.entries.delete(key);
      }
    });
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
