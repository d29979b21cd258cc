import { badRequest, fail } from '@hearth/core';
import type { Queryable } from '../../platform/postgres.js';
import type { QueryContext } from './context.js';
import { afterCondition, orderBy, type SortKey } from './sort.js';
import type { Cursor } from './cursor.js';
import type { CompiledSearch } from './plan.js';
import { finalize } from './statement.js';

export interface MatchRow {
  resource_type: string;
  id: string;
  content: string;
  phase: 0 | 1;
  keys: (string | null)[];
  refs?: string[];
}

interface DbRow {
  resource_type: string;
  id: string;
  content: string;
  refs?: string[];
  [key: string]: string | string[] | null | undefined;
}

/** Deepest page reachable by _offset; beyond it, follow the `next` links (keyset, constant cost). */
export const MAX_OFFSET = 10_000;

async function select(
  db: Queryable,
  ctx: QueryContext,
  search: CompiledSearch,
  phase: 0 | 1,
  cursor: Cursor | undefined,
  limit: number,
  offset: number,
): Promise<MatchRow[]> {
  const { sort } = search;
  const first = phase === 0 ? (search.phase0Join ?? sort.join) : undefined;
  const keys: SortKey[] = first ? [first.key, ...sort.keys] : sort.keys;
  const where = [...(first ? search.phase0Where : search.where)];
  let join = '';
  if (first) join = first.clause;
  else if (sort.join) where.push(sort.join.missing);
  if (cursor && cursor.phase === phase) {
    where.push(afterCondition(ctx, keys, cursor.keys));
  }
  const keyColumns = keys.map((k, i) => `(${k.expr})::text AS k${i}`).join(', ');
  // Through a token join a resource may come twice (two matching rows), with equal keys.
  const distinct = first && search.phase0Join ? `DISTINCT ON (${keys.map((k) => k.expr).join(', ')}) ` : '';
  const refs = search.refs ? `, ${search.refs} AS refs` : '';
  const candidates = phase === 0 && !sort.join ? search.candidates : undefined;
  let sql: string;
  if (candidates) {
    // The page's ids from the index rows, then their resource rows (candidates.ts).
    const c = candidates.alias;
    const cw = [...candidates.where];
    if (cursor && cursor.phase === 0) cw.push(afterCondition(ctx, candidates.keys, cursor.keys));
    const ids = `${candidates.select} WHERE ${cw.join(' AND ')} ORDER BY ${orderBy(candidates.keys)} LIMIT ${limit}${offset > 0 ? ` OFFSET ${offset}` : ''}`;
    sql = `SELECT r.resource_type, r.id, r.content, ${keyColumns}${refs}
    FROM ${search.from} r JOIN (${ids}) ${c} ON r.id = ${c}.resource_id AND r.project_id = ${c}.project_id
    WHERE ${candidates.visible.join(' AND ')}
    ORDER BY ${orderBy(keys)}
    LIMIT ${limit}`;
  } else {
    sql = `SELECT ${distinct}r.resource_type, r.id, r.content, ${keyColumns}${refs}
    FROM ${search.from} r ${join}
    WHERE ${where.join(' AND ')}
    ORDER BY ${orderBy(keys)}
    LIMIT ${limit}${offset > 0 ? ` OFFSET ${offset}` : ''}`;
  }
  const q = finalize(sql, ctx.params);
  // Unnamed (planned per execution): a generic plan of a prepared statement cannot see the
  // values, and chose far worse plans for sorted searches (measured: 10 ms -> 250 ms; and for
  // code=X&_sort=-date at 20,000 patients it estimated one match, read all 62,500 by the value
  // index and sorted them: 8.5 s instead of 5 ms).
  const result = await db.query<DbRow>(q.text, q.values);
  return result.rows.map((r) => ({
    resource_type: r.resource_type,
    id: r.id,
    content: r.content,
    phase,
    keys: keys.map((_k, i) => (r[`k${i}`] as string | null) ?? null),
    ...(r.refs ? { refs: r.refs } : {}),
  }));
}

/** Counts the rows of phase 0 (those with a value for the first sort key). */
async function countPhase0(db: Queryable, ctx: QueryContext, search: CompiledSearch): Promise<number> {
  const sql = `SELECT count(*)::int AS n FROM ${search.from} r ${search.sort.join?.clause ?? ''} WHERE ${search.where.join(' AND ')}`;
  const q = finalize(sql, ctx.params);
  return (await db.query<{ n: number }>(q.text, q.values)).rows[0].n;
}

/**
 * One page of matches: `count + 1` rows are read so that the presence of a next page is known
 * without counting. With a parameter as the first sort key, the resources that have a value
 * come first (phase 0) and those without follow (phase 1), each read in index order.
 */
export async function selectPage(
  db: Queryable,
  ctx: QueryContext,
  search: CompiledSearch,
  count: number,
  offset: number,
  cursor: Cursor | undefined,
): Promise<{ rows: MatchRow[]; hasMore: boolean }> {
  if (offset > MAX_OFFSET) {
    fail(badRequest(`_offset may be at most ${MAX_OFFSET}; follow the next links for deeper pages`, '_offset'));
  }
  const limit = count + 1;
  let rows: MatchRow[] = [];
  if (!search.sort.join) {
    rows = await select(db, ctx, search, 0, cursor, limit, cursor ? 0 : offset);
  } else {
    if (!cursor || cursor.phase === 0) {
      rows = await select(db, ctx, search, 0, cursor, limit, cursor ? 0 : offset);
    }
    if (rows.length < limit && !search.withValueOnly) {
      let phase1Offset = 0;
      if (!cursor && offset > 0) {
        phase1Offset = rows.length > 0 ? 0 : Math.max(0, offset - (await countPhase0(db, ctx, search)));
      }
      rows.push(...(await select(db, ctx, search, 1, cursor, limit - rows.length, phase1Offset)));
    }
  }
  const hasMore = rows.length > count;
  return { rows: hasMore ? rows.slice(0, count) : rows, hasMore };
}

/** _total=accurate: a COUNT of every match. */
export async function countMatches(db: Queryable, ctx: QueryContext, search: CompiledSearch): Promise<number> {
  const sql = `SELECT count(*)::int AS n FROM ${search.from} r WHERE ${search.where.join(' AND ')}`;
  const q = finalize(sql, ctx.params);
  return (await db.query<{ n: number }>(q.text, q.values)).rows[0].n;
}

/** Below this planner estimate, _total=estimate counts (boundedly) instead: small estimates are often far off. */
const EXACT_BELOW = 1000;

/**
 * _total=estimate: the planner's estimate; when that is small, a count that stops after
 * EXACT_BELOW matches (exact when there are fewer, else the larger of the two). Never an
 * unbounded COUNT.
 */
export async function estimateMatches(db: Queryable, ctx: QueryContext, search: CompiledSearch): Promise<number> {
  const where = search.where.join(' AND ');
  const plan = finalize(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${search.from} r WHERE ${where}`, ctx.params);
  const result = await db.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(plan.text, plan.values);
  const estimate = Math.round(result.rows[0]['QUERY PLAN'][0].Plan['Plan Rows']);
  if (estimate >= EXACT_BELOW) return estimate;
  const bounded = finalize(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${search.from} r WHERE ${where} LIMIT ${EXACT_BELOW}) m`,
    ctx.params,
  );
  const n = (await db.query<{ n: number }>(bounded.text, bounded.values)).rows[0].n;
  return n < EXACT_BELOW ? n : Math.max(n, estimate);
}
