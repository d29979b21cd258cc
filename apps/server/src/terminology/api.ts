/**
 * What other modules call (documented in README.md): search's `:in`, `:not-in`, `:below`, `:above`
 * token modifiers, and required-binding validation. Everything here reads the terminology tables;
 * nothing here throws for an unknown value set or code system: it answers `undefined` instead.
 */
import { badRequest, fail, OperationOutcomeError, tooCostly } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { ComposeCompiler } from './compile.js';
import { expandDefinition, findMember, MAX_EXPANSION } from './expand.js';
import { findCodeSystem, findValueSet, splitCanonical, type TerminologyScope } from './resolve.js';

export type { TerminologyScope } from './resolve.js';

export interface SystemCode {
  system: string | null;
  code: string;
}

/** Errors a value set can cause when expanded (unknown code system, cycle, too large): not ours to raise. */
async function orUndefined<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OperationOutcomeError) {
      return undefined;
    }
    throw err;
  }
}

/**
 * The (system, code) pairs of a value set, for `:in` / `:not-in`. `valueSetUrl` may carry
 * `|version`. Undefined when the value set is unknown, cannot be expanded here, or has more than
 * `max` codes (then use {@link valueSetMembersSql}).
 */
export async function expandCodes(
  db: Queryable,
  scope: TerminologyScope,
  valueSetUrl: string,
  max = MAX_EXPANSION,
): Promise<SystemCode[] | undefined> {
  const { url, version } = splitCanonical(valueSetUrl);
  const vs = await findValueSet(db, scope, url, { version });
  if (!vs) {
    return undefined;
  }
  return orUndefined(async () => {
    const page = await expandDefinition(db, scope, vs, { count: max + 1 });
    if (page.total > max) {
      return undefined;
    }
    return page.contains.map((c) => ({ system: c.system ?? null, code: c.code }));
  });
}

/**
 * The search module's `ValueSetExpander` for `:in` / `:not-in` (search/query/context.ts): the codes
 * of a value set as seen from one project. Unlike {@link expandCodes} it explains failures: an
 * unknown value set is a 400, one drawing on a code system not held here a 422, one of more than
 * 10,000 codes a 400 too-costly.
 */
export async function expandForSearch(
  db: Queryable,
  scope: TerminologyScope,
  valueSetUrl: string,
): Promise<{ system?: string; code: string }[]> {
  const { url, version } = splitCanonical(valueSetUrl);
  const vs = await findValueSet(db, scope, url, { version });
  if (!vs) {
    fail(badRequest(`Unknown value set ${valueSetUrl}`));
  }
  const page = await expandDefinition(db, scope, vs, { count: MAX_EXPANSION + 1 });
  if (page.total > MAX_EXPANSION) {
    fail(tooCostly(`The value set ${valueSetUrl} has ${page.total} codes, more than :in can take (${MAX_EXPANSION})`));
  }
  return page.contains.map((c) => (c.system ? { system: c.system, code: c.code } : { code: c.code }));
}

/**
 * A value set's members as SQL to embed in a search statement: `SELECT system, code FROM …`, its
 * placeholders numbered after the caller's first `paramOffset` parameters. For value sets of any
 * size; undefined when the value set is unknown or cannot be expanded here.
 */
export async function valueSetMembersSql(
  db: Queryable,
  scope: TerminologyScope,
  valueSetUrl: string,
  paramOffset: number,
): Promise<{ sql: string; params: unknown[] } | undefined> {
  const { url, version } = splitCanonical(valueSetUrl);
  const vs = await findValueSet(db, scope, url, { version });
  if (!vs) {
    return undefined;
  }
  return orUndefined(async () => {
    const compiler = new ComposeCompiler(db, scope, {}, paramOffset);
    const members = await compiler.compile(vs);
    return { sql: `SELECT vs_m.system, vs_m.code FROM (${members}) vs_m`, params: compiler.params };
  });
}

/**
 * The codes `below` a code (itself and its descendants) or `above` it (itself and its ancestors)
 * in a code system's hierarchy, for `:below` / `:above`. Undefined when the code system is not
 * stored here (then search can only match the code itself).
 */
export async function subsumedCodes(
  db: Queryable,
  scope: TerminologyScope,
  system: string,
  code: string,
  direction: 'below' | 'above',
): Promise<string[] | undefined> {
  const sql = await subsumedCodesSql(db, scope, system, code, direction, 0);
  if (!sql) {
    return undefined;
  }
  return (await db.query<{ code: string }>(sql.sql, sql.params)).rows.map((r) => r.code);
}

/** {@link subsumedCodes} as embeddable SQL: `SELECT code FROM …` with placeholders after `paramOffset`. */
export async function subsumedCodesSql(
  db: Queryable,
  scope: TerminologyScope,
  system: string,
  code: string,
  direction: 'below' | 'above',
  paramOffset: number,
): Promise<{ sql: string; params: unknown[]; system: string } | undefined> {
  const { url, version } = splitCanonical(system);
  const cs = await findCodeSystem(db, scope, url, { version });
  if (!cs || (cs.conceptCount === 0 && cs.content === 'not-present')) {
    return undefined;
  }
  const [from, to] = direction === 'below' ? ['descendant', 'ancestor'] : ['ancestor', 'descendant'];
  const a = `$${paramOffset + 1}`;
  const b = `$${paramOffset + 2}`;
  return {
    sql: `SELECT ${b}::text AS code UNION SELECT ${from} FROM terminology_concept_closure WHERE code_system_id = ${a} AND ${to} = ${b}`,
    params: [cs.id, code],
    system: cs.url,
  };
}

/**
 * Whether a code is in a value set (any system when `system` is undefined, as for a `code`
 * element). Undefined when the value set is unknown here or cannot be expanded (e.g. it draws on
 * SNOMED CT and SNOMED CT is not loaded): callers should then not reject the code.
 */
export async function validateCode(
  db: Queryable,
  scope: TerminologyScope,
  valueSetUrl: string,
  system: string | undefined,
  code: string,
): Promise<boolean | undefined> {
  const { url, version } = splitCanonical(valueSetUrl);
  const vs = await findValueSet(db, scope, url, { version });
  if (!vs) {
    return undefined;
  }
  const member = await orUndefined(() => findMember(db, scope, vs, code, system));
  return member?.found;
}

/** Global-only scope: the R4 content every project sees (bindings in the spec point there). */
export const GLOBAL_SCOPE: TerminologyScope = { projects: [] };
