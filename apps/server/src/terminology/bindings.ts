import type { Queryable } from '../platform/postgres.js';
import { expandCodes, GLOBAL_SCOPE, validateCode } from './api.js';

/** Value sets up to this many codes are held in memory once expanded. */
const CACHE_MAX_CODES = 5000;
/** At most this many value sets are cached (the R4 required bindings are a few hundred). */
const CACHE_MAX_SETS = 2000;

/**
 * Required-binding checks for the validator (hl7.org/fhir/R4/terminologies.html#required) against
 * the global (R4) value sets. Expansions are cached per value set url, so after the first check
 * (or `preload`) a check is a Set lookup, and `validateCodeCached` can answer synchronously.
 * When global terminology is written (by any process: terminology/module.ts) `refresh` reads the
 * required value sets again and swaps them in at once, so checks never go unanswered meanwhile;
 * other expansions are read again on their next use.
 */
export interface BindingChecker {
  /** true / false; undefined when the value set is unknown or not expandable here (do not reject then). */
  validateCode(valueSetUrl: string, system: string | undefined, code: string): Promise<boolean | undefined>;
  /** The same, from memory only: undefined also when the value set is not (yet) cached. */
  validateCodeCached(valueSetUrl: string, system: string | undefined, code: string): boolean | undefined;
  /** Expands and caches these value sets (e.g. every required binding's) ahead of use. */
  preload(valueSetUrls: string[]): Promise<void>;
  /**
   * Expands these value sets afresh and then replaces the whole cache with them (expansions of
   * other value sets are dropped, and one read before this call is not kept).
   */
  refresh(valueSetUrls: string[]): Promise<void>;
}

interface Entry {
  /** "system|code" and "|code" keys; null when the value set cannot be expanded or is too large. */
  keys: Set<string> | null;
  loadedAt: number;
}

/** `maxAgeMs`: an expansion older than this is read again by validateCode (refresh renews the rest). */
export function createBindingChecker(db: Queryable, maxAgeMs = 30_000): BindingChecker {
  let cache = new Map<string, Entry>();
  /** Bumped by refresh: an expansion read before it is not cached. */
  let generation = 0;

  const expand = async (url: string): Promise<Entry> => {
    const codes = await expandCodes(db, GLOBAL_SCOPE, url, CACHE_MAX_CODES);
    const entry: Entry = { keys: null, loadedAt: Date.now() };
    if (codes) {
      entry.keys = new Set();
      for (const c of codes) {
        entry.keys.add(`${c.system ?? ''}|${c.code}`);
        entry.keys.add(`|${c.code}`);
      }
    }
    return entry;
  };

  const load = async (url: string): Promise<Entry> => {
    const cached = cache.get(url);
    if (cached && Date.now() - cached.loadedAt < maxAgeMs) {
      return cached;
    }
    const started = generation;
    const entry = await expand(url);
    if (started !== generation) {
      return entry;
    }
    if (cache.size >= CACHE_MAX_SETS) {
      cache.delete(cache.keys().next().value as string);
    }
    cache.set(url, entry);
    return entry;
  };

  const lookup = (entry: Entry, system: string | undefined, code: string): boolean | undefined =>
    entry.keys ? entry.keys.has(`${system ?? ''}|${code}`) : undefined;

  return {
    async validateCode(valueSetUrl, system, code) {
      const entry = await load(valueSetUrl);
      if (entry.keys) {
        return lookup(entry, system, code);
      }
      // Too large to cache (or not expandable): ask the database for this one code.
      return validateCode(db, GLOBAL_SCOPE, valueSetUrl, system, code);
    },
    validateCodeCached(valueSetUrl, system, code) {
      const entry = cache.get(valueSetUrl);
      return entry ? lookup(entry, system, code) : undefined;
    },
    async preload(valueSetUrls) {
      for (const url of valueSetUrls) {
        await load(url);
      }
    },
    async refresh(valueSetUrls) {
      generation++;
      const fresh = new Map<string, Entry>();
      for (const url of new Set(valueSetUrls)) {
        fresh.set(url, await expand(url));
      }
      cache = fresh;
    },
  };
}
