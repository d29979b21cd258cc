import { badRequest, fail, Operator, splitSearchValue, type Filter } from '@hearth/core';
import type { SearchParamRegistry } from '../registry/project-params.js';
import type { ParamDef } from '../registry/params.js';

/** The access rules of a scope, as storage's AccessGuard exposes them (auth/access builds them). */
export interface SearchAccess {
  assertInteraction?(resourceType: string, interaction: 'search' | 'read'): void;
  readCondition?(
    resourceType: string | undefined,
    interaction: 'search' | 'read',
    alias: string,
    param: (value: unknown) => string,
  ): string | undefined;
  hidesFields?(resourceType: string): boolean;
  redact?<T>(resource: T): T;
}

/** Expands a value set to its codes, for `:in` and `:not-in` (the terminology module provides it). */
export type ValueSetExpander = (url: string, projectId: string) => Promise<{ system?: string; code: string }[]>;

/**
 * The codes related to `system|code` in its code system's hierarchy (the code itself included),
 * as SQL `SELECT code …` with values `$1…` in `params`; undefined when the code system is not
 * held here. For token `:above` / `:below` (the terminology module provides it).
 */
export type SubsumptionLookup = (
  system: string,
  code: string,
  direction: 'above' | 'below',
  projectId: string,
) => Promise<{ sql: string; params: unknown[] } | undefined>;

/**
 * Everything a query is compiled against: the bound parameters, the parameter definitions of
 * the project, the projects and access rules of the scope. Values only ever enter SQL through
 * bind(); identifiers come from fixed lists (table and column names) or the type registry.
 */
export class QueryContext {
  readonly params: unknown[] = [];
  private aliasCount = 0;
  /** Unknown or unsupported parameters that lenient handling ignored. */
  readonly warnings: string[] = [];
  /** Notes for the caller that are not about the request (a reindex in progress). */
  readonly information: string[] = [];
  /** Value sets expanded before compilation, by URL. */
  readonly valueSets = new Map<string, { system?: string; code: string }[]>();
  /** Hierarchy lookups done before compilation, as bound subqueries (query/terminology.ts subsumptionKey). */
  readonly subsumption = new Map<string, string>();
  /**
   * When the page is ordered by id and starts after a cursor: the bound on the id, repeated on
   * the index rows of the main resource (`x.resource_id >= …`) so that an ordered scan of them
   * starts at the cursor too (PostgreSQL does not carry inequalities across a join).
   */
  idBound?: { op: '>=' | '<='; value: string };
  /**
   * When `_id=` names the main resources: their index rows are then probed per resource (a fenced
   * subquery on (resource_id, code)), never scanned by value. With statistics that underrate a
   * value, PostgreSQL otherwise read every index row of a common code to test a few resources
   * (a subscription's criteria check: 6.6 ms instead of 0.05 ms).
   */
  idsPinned = false;

  constructor(
    readonly registry: SearchParamRegistry,
    readonly projectId: string,
    /** Readable projects; undefined: all. */
    readonly projects: string[] | undefined,
    readonly fhirBase: string,
    readonly strict: boolean,
    readonly access?: SearchAccess,
  ) {}

  /** Binds a value and returns its placeholder, with a cast when given ('$3::text[]'). */
  bind(value: unknown, cast?: string): string {
    this.params.push(value);
    return cast ? `$${this.params.length}::${cast}` : `$${this.params.length}`;
  }

  alias(prefix: string): string {
    return `${prefix}${++this.aliasCount}`;
  }

  param(resourceType: string, code: string): ParamDef | undefined {
    return this.registry.get(resourceType, code, this.projectId);
  }

  /** Condition on a resource row `alias` restricting it to the readable projects. */
  projectCondition(alias: string): string | undefined {
    if (!this.projects) return undefined;
    if (this.projects.length === 1) return `${alias}.project_id = ${this.bind(this.projects[0], 'uuid')}`;
    return `${alias}.project_id = ANY(${this.bind(this.projects, 'uuid[]')})`;
  }

  /** The scope's access condition for rows of `resourceType` under `alias`. */
  accessCondition(resourceType: string | undefined, alias: string): string | undefined {
    return this.access?.readCondition?.(resourceType, 'search', alias, (v) => this.bind(v));
  }

  /** An unknown or unsupported parameter: a 400 under strict handling, a warning otherwise. */
  unsupported(message: string, expression: string): void {
    if (this.strict) {
      fail(badRequest(message, expression));
    }
    this.warnings.push(message);
  }
}

/** One OR alternative of a filter's value, with its prefix (eq when none). */
export interface ValueItem {
  prefix: Operator;
  /** The text, with escapes of '|' and '$' still in place for a second split. */
  text: string;
}

const PREFIXES = new Set<string>(['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap']);

/** Most alternatives one parameter may list (each becomes bound values in SQL). */
export const MAX_OR_VALUES = 100;

/** Splits a filter's value into its OR alternatives, reading prefixes when the kind takes them (`prefixed`). */
export function valueItems(filter: Filter, prefixed: boolean): ValueItem[] {
  let value = filter.value;
  let own = PREFIXES.has(filter.operator) ? filter.operator : Operator.EQUALS;
  if (!prefixed && own !== Operator.EQUALS) {
    // A prefix read off a value that takes none (a token 'ne123'): it was part of the value.
    value = `${own}${value}`;
    own = Operator.EQUALS;
  }
  const texts = splitSearchValue(value, ',', false);
  if (texts.length > MAX_OR_VALUES) {
    fail(badRequest(`${filter.code}: at most ${MAX_OR_VALUES} values separated by commas`, filter.code));
  }
  return texts.map((text) => {
    if (prefixed && own === Operator.EQUALS && /^[a-z]{2}/.test(text) && PREFIXES.has(text.slice(0, 2))) {
      return { prefix: text.slice(0, 2) as Operator, text: text.slice(2) };
    }
    return { prefix: own, text };
  });
}

/** Removes the escapes of a value part. */
export function unescapeValue(text: string): string {
  return text.replace(/\\([\\,|$])/g, '$1');
}

export function invalidValue(filter: Filter, detail: string): never {
  fail(badRequest(`Invalid value for search parameter ${filter.code}: ${detail}`, filter.code));
}
