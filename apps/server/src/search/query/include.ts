import { badRequest, fail, type IncludeTarget } from '@hearth/core';
import { isResourceTypeName } from '../resource-types.js';
import type { Queryable } from '../../platform/postgres.js';
import { resourceTable } from '../../storage/tables.js';
import { visibleRow } from './conditions.js';
import type { QueryContext } from './context.js';
import type { RowRef } from './row.js';
import { finalize } from './statement.js';

export interface FoundRow {
  resource_type: string;
  id: string;
  content: string;
  /** The row's references through the page's _include parameters ('code|type|id'), read with the page. */
  refs?: string[];
}

/** Most resources one search brings along through _include and _revinclude. */
export const MAX_INCLUDED = 1000;
/** Rounds of :iterate. */
const MAX_ITERATIONS = 4;

const key = (r: { resource_type: string; id: string }) => `${r.resource_type}/${r.id}`;

function referenceCodes(ctx: QueryContext, sourceType: string, target: IncludeTarget, what: string): string[] {
  if (target.searchParam === '*') {
    return [...ctx.registry.paramsFor(sourceType, ctx.projectId).values()]
      .filter((p) => p.type === 'reference' && !p.column)
      .map((p) => p.code);
  }
  const param = ctx.param(sourceType, target.searchParam);
  if (!param || param.type !== 'reference') {
    fail(badRequest(`${what}=${target.resourceType}:${target.searchParam}: not a reference parameter`, what));
  }
  return [param.code];
}

/**
 * Reads resources by type and id in one statement (a UNION ALL over the types' partitions),
 * within the scope: readable projects, not deleted, access rules. Ids of contained resources
 * ('container#id') are not resources of their own and are left out.
 */
async function readByIds(db: Queryable, ctx: QueryContext, byType: Map<string, Set<string>>): Promise<FoundRow[]> {
  const parts: string[] = [];
  for (const [type, idSet] of byType) {
    const ids = [...idSet].filter((id) => !id.includes('#'));
    if (ids.length === 0 || !isResourceTypeName(type)) continue;
    const alias = ctx.alias('r');
    const where = [...visibleRow(ctx, alias, type), `${alias}.id = ANY(${ctx.bind(ids, 'text[]')})`];
    parts.push(
      `(SELECT ${alias}.resource_type, ${alias}.id, ${alias}.content FROM ${resourceTable(type)} ${alias} WHERE ${where.join(' AND ')} LIMIT ${MAX_INCLUDED})`,
    );
  }
  if (parts.length === 0) return [];
  return run(db, finalize(parts.join(' UNION ALL '), ctx.params));
}

/**
 * Unnamed, planned per execution: a generic plan cannot see how many ids there are, and with
 * a project condition chose the (type, project, last_updated, id) index, which reads every
 * resource of the project. A lookup of one type by id plans in well under 0.1 ms.
 */
async function run(db: Queryable, q: { text: string; values: unknown[] }): Promise<FoundRow[]> {
  return (await db.query<FoundRow>(q.text, q.values)).rows;
}

function addTo(map: Map<string, Set<string>>, type: string, id: string): void {
  let set = map.get(type);
  if (!set) {
    set = new Set();
    map.set(type, set);
  }
  set.add(id);
}

/** Resources the `rows` reference through the include's parameters (hl7.org/fhir/R4/search.html#include). */
async function forward(db: Queryable, ctx: QueryContext, target: IncludeTarget, rows: FoundRow[]): Promise<FoundRow[]> {
  const bySource = new Map<string, string[]>();
  for (const row of rows) {
    if (target.resourceType !== '*' && row.resource_type !== target.resourceType) continue;
    bySource.set(row.resource_type, [...(bySource.get(row.resource_type) ?? []), row.id]);
  }
  const targets = new Map<string, Set<string>>();
  const found: FoundRow[] = [];
  for (const [sourceType, ids] of bySource) {
    const codes = referenceCodes(ctx, sourceType, target, '_include');
    if (codes.length === 0) continue;
    const sources = rows.filter((r) => r.resource_type === sourceType);
    if (sources.every((r) => r.refs)) {
      // Read with the page (pageReferences): only the targets are left to read.
      for (const ref of sources.flatMap((r) => r.refs!)) {
        const [code, type, id] = splitRef(ref);
        if (codes.includes(code) && (!target.targetType || type === target.targetType)) addTo(targets, type, id);
      }
      continue;
    }
    const conds = [
      `x.resource_type = ${ctx.bind(sourceType)}`,
      `x.resource_id = ANY(${ctx.bind(ids, 'text[]')})`,
      `x.code = ANY(${ctx.bind(codes, 'text[]')})`,
      'x.target_id IS NOT NULL',
    ];
    if (target.targetType) conds.push(`x.target_type = ${ctx.bind(target.targetType)}`);
    const project = ctx.projectCondition('x');
    if (project) conds.push(project);
    const refs = `SELECT DISTINCT x.target_type, x.target_id FROM search_reference x WHERE ${conds.join(' AND ')} LIMIT ${MAX_INCLUDED}`;
    const possible = possibleTargets(ctx, sourceType, codes, target.targetType);
    if (possible && possible.length <= MAX_UNION_TYPES) {
      // The target types are known: one statement reads the references and the targets.
      found.push(...(await readTargets(db, ctx, refs, possible)));
      continue;
    }
    const q = finalize(refs, ctx.params);
    const rows2 = await db.query<{ target_type: string; target_id: string }>(q.text, q.values);
    for (const r of rows2.rows) addTo(targets, r.target_type, r.target_id);
  }
  return [...found, ...(await readByIds(db, ctx, targets))];
}

/** 'code|type|id' (ids never hold '|': they are [A-Za-z0-9-.], or 'container#id'). */
function splitRef(ref: string): [string, string, string] {
  const a = ref.indexOf('|');
  const b = ref.indexOf('|', a + 1);
  return [ref.slice(0, a), ref.slice(a + 1, b), ref.slice(b + 1)];
}

/**
 * An expression over the page's resource rows `row` listing their references through the
 * search's _include parameters ('code|type|id'), so that the page statement reads them and the
 * include needs one statement for the targets alone: an id lookup on the types actually
 * referenced, rather than a union over every type the parameters may point at (Group, Device,
 * Patient and Location for Observation:subject). PostgreSQL evaluates it for the returned
 * rows only (an expensive output column is computed after the sort and limit). Undefined when
 * no _include applies to the searched type.
 */
export function pageReferences(ctx: QueryContext, row: RowRef, include: IncludeTarget[]): string | undefined {
  const type = row.resourceType;
  if (!type) return undefined;
  const codes = new Set<string>();
  for (const target of include) {
    if (target.resourceType !== '*' && target.resourceType !== type) continue;
    referenceCodes(ctx, type, target, '_include').forEach((c) => codes.add(c));
  }
  if (codes.size === 0) return undefined;
  const x = ctx.alias('x');
  const where = [
    `${x}.resource_id = ${row.alias}.id`,
    `${x}.project_id = ${row.alias}.project_id`,
    `${x}.resource_type = ${ctx.bind(type)}`,
    `${x}.code = ANY(${ctx.bind([...codes], 'text[]')})`,
    `${x}.target_id IS NOT NULL AND ${x}.target_type IS NOT NULL`,
  ];
  return `ARRAY(SELECT ${x}.code || '|' || ${x}.target_type || '|' || ${x}.target_id FROM search_reference ${x} WHERE ${where.join(' AND ')})`;
}

/** Types beyond which the targets are read in a second statement rather than one UNION ALL. */
const MAX_UNION_TYPES = 8;

/** The types the include's parameters may point at, when every one of them says. */
function possibleTargets(ctx: QueryContext, sourceType: string, codes: string[], only?: string): string[] | undefined {
  if (only) return isResourceTypeName(only) ? [only] : [];
  const types = new Set<string>();
  for (const code of codes) {
    const target = ctx.param(sourceType, code)?.target;
    if (!target) return undefined;
    target.filter(isResourceTypeName).forEach((t) => types.add(t));
  }
  return [...types];
}

/** The targets of the references `refs` selects, per type partition, in one statement. */
async function readTargets(db: Queryable, ctx: QueryContext, refs: string, types: string[]): Promise<FoundRow[]> {
  if (types.length === 0) return [];
  const parts = types.map((type) => {
    const alias = ctx.alias('r');
    const where = [
      ...visibleRow(ctx, alias, type),
      `${alias}.id IN (SELECT target_id FROM refs WHERE target_type = ${ctx.bind(type)})`,
    ];
    return `(SELECT ${alias}.resource_type, ${alias}.id, ${alias}.content FROM ${resourceTable(type)} ${alias} WHERE ${where.join(' AND ')} LIMIT ${MAX_INCLUDED})`;
  });
  return run(db, finalize(`WITH refs AS MATERIALIZED (${refs}) ${parts.join(' UNION ALL ')}`, ctx.params));
}

/** Resources that reference the `rows` through the revinclude's parameter. */
async function reverse(db: Queryable, ctx: QueryContext, target: IncludeTarget, rows: FoundRow[]): Promise<FoundRow[]> {
  if (target.resourceType !== '*' && !isResourceTypeName(target.resourceType)) {
    fail(badRequest(`_revinclude: unknown resource type "${target.resourceType}"`, '_revinclude'));
  }
  const wanted = target.targetType ? rows.filter((r) => r.resource_type === target.targetType) : rows;
  if (wanted.length === 0) return [];
  const conds = [
    `(x.target_type, x.target_id) IN (SELECT * FROM unnest(${ctx.bind(
      wanted.map((r) => r.resource_type),
      'text[]',
    )}, ${ctx.bind(
      wanted.map((r) => r.id),
      'text[]',
    )}))`,
  ];
  if (target.resourceType !== '*') {
    conds.push(`x.resource_type = ${ctx.bind(target.resourceType)}`);
    conds.push(`x.code = ANY(${ctx.bind(referenceCodes(ctx, target.resourceType, target, '_revinclude'), 'text[]')})`);
  }
  const project = ctx.projectCondition('x');
  if (project) conds.push(project);
  const q = finalize(
    `SELECT DISTINCT x.resource_type, x.resource_id FROM search_reference x WHERE ${conds.join(' AND ')} LIMIT ${MAX_INCLUDED}`,
    ctx.params,
  );
  const sources = new Map<string, Set<string>>();
  for (const r of (await db.query<{ resource_type: string; resource_id: string }>(q.text, q.values)).rows) {
    addTo(sources, r.resource_type, r.resource_id);
  }
  return readByIds(db, ctx, sources);
}

/**
 * Runs _include and _revinclude for the page's matches: each once on the matches, then the
 * :iterate ones again on what was added, until nothing new comes (or the limits are reached).
 */
export async function loadIncluded(
  db: Queryable,
  ctx: QueryContext,
  include: IncludeTarget[],
  revInclude: IncludeTarget[],
  matches: FoundRow[],
): Promise<FoundRow[]> {
  if (include.length === 0 && revInclude.length === 0) return [];
  const seen = new Set(matches.map(key));
  const added: FoundRow[] = [];
  let frontier = matches;
  for (let round = 0; round <= MAX_ITERATIONS && frontier.length > 0 && added.length < MAX_INCLUDED; round++) {
    const next: FoundRow[] = [];
    const active = (list: IncludeTarget[]) => (round === 0 ? list : list.filter((t) => t.modifier === 'iterate'));
    const batches = [
      ...active(include).map((t) => forward(db, ctx, t, frontier)),
      ...active(revInclude).map((t) => reverse(db, ctx, t, frontier)),
    ];
    for (const rows of await Promise.all(batches)) {
      for (const row of rows) {
        const k = key(row);
        if (!seen.has(k) && added.length < MAX_INCLUDED) {
          seen.add(k);
          added.push(row);
          next.push(row);
        }
      }
    }
    frontier = next;
  }
  return added;
}
