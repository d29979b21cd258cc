/**
 * Where the client keeps its session: pluggable, so that a browser app keeps it in localStorage,
 * a server process in memory, and a CLI in a file of its own.
 */

/** A string key-value store, shaped like the Web Storage API (so localStorage is one). */
export interface ClientStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Keeps everything in memory, for the life of the object. */
export class MemoryStorage implements ClientStorage {
  private readonly data = new Map<string, string>();

  getItem(key: string): string | null {
    return this.data.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.data.set(key, value);
  }
  removeItem(key: string): void {
    this.data.delete(key);
  }
  /** The number of keys held. */
  get length(): number {
    return this.data.size;
  }
}

/**
 * The browser's localStorage, under a key prefix so that two clients (or two servers) on one
 * origin do not share a session.
 */
export class LocalStorage implements ClientStorage {
  constructor(
    private readonly prefix = 'hearth:',
    private readonly store: ClientStorage = (globalThis as { localStorage?: ClientStorage })
      .localStorage as ClientStorage,
  ) {
    if (!store) {
      throw new Error('localStorage is not available here; use MemoryStorage');
    }
  }
  getItem(key: string): string | null {
    return this.store.getItem(this.prefix + key);
  }
  setItem(key: string, value: string): void {
    this.store.setItem(this.prefix + key, value);
  }
  removeItem(key: string): void {
    this.store.removeItem(this.prefix + key);
  }
}

/** localStorage where there is one (a browser), memory elsewhere. */
export function defaultStorage(): ClientStorage {
  try {
    const local = (globalThis as { localStorage?: ClientStorage }).localStorage;
    if (local) {
      return new LocalStorage('hearth:', local);
    }
  } catch {
    // Access to localStorage throws in some sandboxed frames; memory is the fallback.
  }
  return new MemoryStorage();
}

/** Reads a JSON value, treating a missing or unreadable one as absent. */
export function getJson<T>(storage: ClientStorage, key: string): T | undefined {
  const text = storage.getItem(key);
  if (!text) {
    return undefined;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** Writes a JSON value; undefined removes the key. */
export function setJson(storage: ClientStorage, key: string, value: unknown): void {
  if (value === undefined) {
    storage.removeItem(key);
  } else {
    storage.setItem(key, JSON.stringify(value));
  }
}
