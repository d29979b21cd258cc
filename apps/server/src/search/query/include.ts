import { badRequest, fail, type IncludeTarget } from '@hearth/core';
import { getAllResourceTypes } from '@hearth/definitions';
import type { Queryable } from '../../platform/postgres.js';
import { resourceTable } from '../../storage/tables.js';
import { visibleRow } from './conditions.js';
import type { QueryContext } from './context.js';
import { finalize } from './statement.js';

export interface FoundRow {
  resource_type: string;
  id: string;
  content: string;
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

/** Resources the `rows` reference through the include's parameters (hl7.org/fhir/R4/search.html#include). */
async function forward(db: Queryable, ctx: QueryContext, target: IncludeTarget, rows: FoundRow[]): Promise<FoundRow[]> {
  const out: FoundRow[] = [];
  const bySource = new Map<string, string[]>();
  for (const row of rows) {
    if (target.resourceType !== '*' && row.resource_type !== target.resourceType) continue;
    bySource.set(row.resource_type, [...(bySource.get(row.resource_type) ?? []), row.id]);
  }
  for (const [sourceType, ids] of bySource) {
    const codes = referenceCodes(ctx, sourceType, target, '_include');
    if (codes.length === 0) continue;
    const base = ctx.params.length;
    const x = 'x';
    const conds = [
      `${x}.resource_type = ${ctx.bind(sourceType)}`,
      `${x}.resource_id = ANY(${ctx.bind(ids, 'text[]')})`,
      `${x}.code = ANY(${ctx.bind(codes, 'text[]')})`,
      `${x}.target_id IS NOT NULL`,
    ];
    if (target.targetType) conds.push(`${x}.target_type = ${ctx.bind(target.targetType)}`);
    const visible = visibleRow(ctx, 'r', target.targetType);
    const sql = `SELECT DISTINCT r.resource_type, r.id, r.content FROM search_reference ${x}
      JOIN resource r ON r.resource_type = ${x}.target_type AND r.id = ${x}.target_id
      WHERE ${conds.join(' AND ')} AND ${visible.join(' AND ')} LIMIT ${MAX_INCLUDED}`;
    const q = finalize(sql, ctx.params);
    void base;
    const result = await db.query<FoundRow>(q.text, q.values);
    out.push(...result.rows);
  }
  return out;
}

/** Resources that reference the `rows` through the revinclude's parameter. */
async function reverse(db: Queryable, ctx: QueryContext, target: IncludeTarget, rows: FoundRow[]): Promise<FoundRow[]> {
  const sourceTypes = target.resourceType === '*' ? getAllResourceTypes() : [target.resourceType];
  if (target.resourceType !== '*' && !getAllResourceTypes().includes(target.resourceType)) {
    fail(badRequest(`_revinclude: unknown resource type "${target.resourceType}"`, '_revinclude'));
  }
  const out: FoundRow[] = [];
  const wanted = target.targetType ? rows.filter((r) => r.resource_type === target.targetType) : rows;
  if (wanted.length === 0) return out;
  for (const sourceType of sourceTypes) {
    const codes = target.resourceType === '*' ? undefined : referenceCodes(ctx, sourceType, target, '_revinclude');
    const x = 'x';
    const conds = [
      `${x}.resource_type = ${ctx.bind(sourceType)}`,
      `(${x}.target_type, ${x}.target_id) IN (SELECT * FROM unnest(${ctx.bind(
        wanted.map((r) => r.resource_type),
        'text[]',
      )}, ${ctx.bind(
        wanted.map((r) => r.id),
        'text[]',
      )}))`,
    ];
    if (codes) conds.push(`${x}.code = ANY(${ctx.bind(codes, 'text[]')})`);
    const visible = visibleRow(ctx, 'r', sourceType);
    const sql = `SELECT DISTINCT r.resource_type, r.id, r.content FROM search_reference ${x}
      JOIN ${resourceTable(sourceType)} r ON r.id = ${x}.resource_id AND r.project_id = ${x}.project_id
      WHERE ${conds.join(' AND ')} AND ${visible.join(' AND ')} LIMIT ${MAX_INCLUDED}`;
    const q = finalize(sql, ctx.params);
    const result = await db.query<FoundRow>(q.text, q.values);
    out.push(...result.rows);
    if (target.resourceType === '*' && out.length >= MAX_INCLUDED) break;
  }
  return out;
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
