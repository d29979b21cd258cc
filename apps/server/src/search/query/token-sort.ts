import { Operator, splitSearchValue, type Filter } from '@hearth/core';
import { TOKEN_SORT_DATE } from '../index/rows.js';
import { tokenKind } from '../kinds/token.js';
import { rowMatch, type RowRef } from './conditions.js';
import { valueItems, type QueryContext } from './context.js';
import type { SortKey, SortPlan } from './sort.js';

/** The phase-0 read of a search sorted by its date, driven by a token filter's rows. */
export interface TokenSortJoin {
  clause: string;
  key: SortKey;
  /** The filter the join stands for: its own EXISTS is not needed in phase 0. */
  filter: Filter;
}

/**
 * `code=X&_sort=-date`: token rows carry their resource's `date` sort keys (sort_first,
 * sort_last; migration 102), so joining the one token row that matches X and ordering by its
 * key lets the (type, code, value, sort key) index deliver matches in page order: a page reads
 * about `_count` rows instead of walking every resource by date and probing its code. Only for
 * one plain value (`code`, `system|code`, `|code`): several values would need a merge of
 * several index ranges. A resource with two rows matching X (the same coding twice) appears
 * twice, so the statement reads DISTINCT ON its sort keys (adjacent: same key, same id).
 * Undefined when the search does not have that shape.
 */
export function tokenSortJoin(
  ctx: QueryContext,
  row: RowRef,
  sort: SortPlan,
  filters: Filter[],
): TokenSortJoin | undefined {
  const join = sort.join;
  if (!join || join.kind !== 'date' || join.code !== TOKEN_SORT_DATE || !row.resourceType) return undefined;
  for (const filter of filters) {
    if (!plainTokenValue(ctx, row.resourceType, filter)) continue;
    const param = ctx.param(row.resourceType, filter.code)!;
    const match = rowMatch(ctx, param, filter);
    if (!match || match.negate || match.kind !== 'token') continue;
    const t = ctx.alias('t');
    const column = join.key.descending ? 'sort_last' : 'sort_first';
    const clause =
      `JOIN search_token ${t} ON ${t}.resource_id = ${row.alias}.id AND ${t}.project_id = ${row.alias}.project_id` +
      ` AND ${t}.resource_type = ${ctx.bind(row.resourceType)} AND ${t}.code = ${ctx.bind(match.code)}` +
      ` AND (${match.predicate.replaceAll('\u0000', t)}) AND ${t}.${column} IS NOT NULL`;
    return {
      clause,
      key: { expr: `${t}.${column}`, type: 'timestamptz', descending: join.key.descending, nullable: false },
      filter,
    };
  }
  return undefined;
}

/** A filter on a token parameter of `type` with one value that names a code. */
function plainTokenValue(ctx: QueryContext, type: string, filter: Filter): boolean {
  if (/[.:]/.test(filter.code) || filter.operator !== Operator.EQUALS) return false;
  const param = ctx.param(type, filter.code);
  if (!param || param.type !== 'token' || param.column) return false;
  const items = valueItems(filter, tokenKind.prefixed);
  if (items.length !== 1) return false;
  const parts = splitSearchValue(items[0].text, '|');
  const value = parts[parts.length - 1];
  return parts.length <= 2 && value !== undefined && value !== '';
}
