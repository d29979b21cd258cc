import type { SearchParamType } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';

/** The search parameter registry's lookups the pre-test needs (search/registry). */
export interface ParamRegistry {
  ensure(db: Queryable, projectId: string): Promise<void>;
  get(resourceType: string, code: string, projectId?: string): { type: SearchParamType } | undefined;
}

const MAX_CACHED = 5000;

/**
 * The pre-test of criteria against a resource's JSON text, with each criteria's needles worked out
 * once (parameter types come from the project's search parameters).
 */
export class CriteriaPretest {
  private readonly cache = new Map<string, Needles>();

  constructor(
    private readonly registry: ParamRegistry,
    private readonly db: Queryable,
  ) {}

  async needles(projectId: string, resourceType: string, query: string): Promise<Needles> {
    const key = `${projectId}|${resourceType}|${query}`;
    let needles = this.cache.get(key);
    if (!needles) {
      await this.registry.ensure(this.db, projectId);
      needles = criteriaNeedles(resourceType, query, (type, code) => this.registry.get(type, code, projectId)?.type);
      if (this.cache.size >= MAX_CACHED) {
        this.cache.clear();
      }
      this.cache.set(key, needles);
    }
    return needles;
  }

  /** False when a resource (its JSON text, lower-cased) certainly does not match the criteria. */
  async mayMatch(projectId: string, resourceType: string, query: string, lowerJson: string): Promise<boolean> {
    return !query || mayMatch(await this.needles(projectId, resourceType, query), lowerJson);
  }
}

/** Looks up a search parameter's type for a resource type in a project (the search registry). */
export type ParamTypeLookup = (resourceType: string, code: string) => SearchParamType | undefined;

/**
 * Values that must appear in a resource's JSON for a criteria to possibly match it: one list per
 * search parameter (all must hold), any of whose values may appear. Undefined: no such test exists.
 */
export type Needles = string[][];

/**
 * A cheap, sound pre-test of a subscription's criteria before the SQL search that decides: a token,
 * reference or uri parameter without modifier matches only values written in the resource, so when
 * none of a parameter's values appears anywhere in the resource's JSON text, the criteria cannot
 * match and no query is run. Anything else (strings, dates, numbers, modifiers, chains) is left to
 * the search itself. Comparison is case-insensitive, which only ever lets more through.
 */
export function criteriaNeedles(resourceType: string, query: string, typeOf: ParamTypeLookup): Needles {
  const needles: Needles = [];
  for (const [name, raw] of new URLSearchParams(query)) {
    if (name.includes(':') || name.includes('.') || name.startsWith('_')) {
      continue;
    }
    const type = typeOf(resourceType, name);
    if (type !== 'token' && type !== 'reference' && type !== 'uri') {
      continue;
    }
    const alternatives: string[] = [];
    let usable = true;
    for (const value of splitUnescaped(raw)) {
      let needle = value;
      if (type === 'token') {
        // system|code: the code must appear (or the system, for "system|").
        const bar = indexOfUnescaped(value, '|');
        if (bar >= 0) {
          const code = value.slice(bar + 1);
          needle = code || value.slice(0, bar);
        }
      } else if (type === 'reference') {
        if (value.includes('|')) {
          usable = false; // A canonical with a version: left to the search.
          break;
        }
        // Type/id, an absolute URL, or an id: the last segment (the id) is always written.
        needle = value.split('/').filter(Boolean).pop() ?? '';
        const history = value.indexOf('/_history/');
        if (history >= 0) {
          needle = value.slice(0, history).split('/').filter(Boolean).pop() ?? '';
        }
      }
      needle = unescapeValue(needle).toLowerCase();
      // JSON text escapes quotes, backslashes and control characters: such values are not pre-tested.
      if (!needle || needle.includes('"') || needle.includes('\\') || hasControlCharacter(needle)) {
        usable = false;
        break;
      }
      alternatives.push(needle);
    }
    if (usable && alternatives.length > 0) {
      needles.push(alternatives);
    }
  }
  return needles;
}

/** False when the resource (its JSON text, lower-cased) certainly does not match. */
export function mayMatch(needles: Needles, lowerJson: string): boolean {
  return needles.every((alternatives) => alternatives.some((needle) => lowerJson.includes(needle)));
}

function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    if (value.charCodeAt(i) < 0x20) {
      return true;
    }
  }
  return false;
}

/** Splits a search value on commas not escaped with a backslash (hl7.org/fhir/R4/search.html#escaping). */
function splitUnescaped(value: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && i + 1 < value.length) {
      current += c + value[i + 1];
      i++;
    } else if (c === ',') {
      out.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  out.push(current);
  return out;
}

function indexOfUnescaped(value: string, ch: string): number {
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') {
      i++;
    } else if (value[i] === ch) {
      return i;
    }
  }
  return -1;
}

function unescapeValue(value: string): string {
  return value.replace(/\\([,$|\\])/g, '$1');
}
