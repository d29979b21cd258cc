import { badRequest, fail, Operator, type Filter, type SearchRequest } from '@hearth/core';
import { isResourceTypeName, resourceTypes } from '../resource-types.js';
import { resourceTable } from '../../storage/tables.js';
import { compartmentMemberTypes, compartmentParams } from '../compartments.js';
import { compileFilter, existsRow, rowMatch, visibleRow, type RowRef } from './conditions.js';
import type { QueryContext } from './context.js';
import { compileFhirFilter } from './filter-expression.js';
import { planSort, type SortKey, type SortPlan } from './sort.js';
import { candidateRows, type Candidates } from './candidates.js';
import { tokenSortJoin } from './token-sort.js';
import { clampMs, toTimestamp } from '../values/dates.js';

/** Most search parameters in one search (each is a semi-join). */
export const MAX_FILTERS = 50;

/** A search compiled to SQL pieces over the resource rows aliased `r`. */
export interface CompiledSearch {
  /** The FROM item: one type's partition, or the parent table for several types. */
  from: string;
  /** Conditions ANDed in every statement of the search (scope, filters). */
  where: string[];
  sort: SortPlan;
  row: RowRef;
  types: string[];
  /** `where` for the rows read through the sort join (phase 0), filters on the sort row folded in. */
  phase0Where: string[];
  /** True when a filter needs a value of the sort parameter: no resource without one can match. */
  withValueOnly: boolean;
  /**
   * Phase 0 read through another join than the sort row's (query/token-sort.ts): its clause and
   * first key replace sort.join's, and rows are DISTINCT ON the keys.
   */
  phase0Join?: { clause: string; key: SortKey };
  /** An output column of the page's _include references (include.ts pageReferences). */
  refs?: string;
  /** An unsorted page read as ids from the index rows first (candidates.ts), and `where` without the filters. */
  candidates?: Candidates & { visible: string[] };
}

export interface CompartmentRef {
  resourceType: string;
  id: string;
}

/** The resource types searched: the one named, or _type's, or a compartment's members, or all. */
export function searchTypes(request: SearchRequest, compartment?: CompartmentRef): string[] {
  if (request.resourceType) {
    return [request.resourceType];
  }
  const members = compartment ? compartmentMemberTypes(compartment.resourceType) : undefined;
  if (request.types && request.types.length > 0) {
    for (const t of request.types) {
      if (!isResourceTypeName(t)) fail(badRequest(`_type: unknown resource type "${t}"`, '_type'));
    }
    return members ? request.types.filter((t) => members.includes(t)) : request.types;
  }
  return members ?? [...resourceTypes()];
}

/** The compartment condition (hl7.org/fhir/R4/compartmentdefinition.html#search). */
function compartmentCondition(ctx: QueryContext, row: RowRef, types: string[], compartment: CompartmentRef): string {
  if (compartment.resourceType === 'Patient') {
    // Stored with every resource and GIN-indexed.
    return `${row.alias}.compartments @> ${ctx.bind([`Patient/${compartment.id}`], 'text[]')}`;
  }
  const branches: string[] = [];
  for (const type of types) {
    const params = compartmentParams(compartment.resourceType, type) ?? [];
    const typeCond = row.resourceType ? 'true' : `${row.alias}.resource_type = ${ctx.bind(type)}`;
    if (type === compartment.resourceType) {
      branches.push(`${typeCond} AND ${row.alias}.id = ${ctx.bind(compartment.id)}`);
    }
    const codes = params.filter((p) => p !== '{def}');
    if (codes.length === 0) continue;
    const sub: RowRef = { alias: row.alias, resourceType: type };
    const refs = codes.map((code) =>
      existsRow(ctx, sub, {
        kind: 'reference',
        code,
        predicate: `\u0000.target_type = ${ctx.bind(compartment.resourceType)} AND \u0000.target_id = ${ctx.bind(compartment.id)}`,
      }),
    );
    branches.push(`${typeCond} AND (${refs.join(' OR ')})`);
  }
  return branches.length > 0 ? `(${branches.map((b) => `(${b})`).join(' OR ')})` : 'false';
}

/** Compiles the filters, _filter, compartment and sort of a search. */
/**
 * Care dates (Patient/$everything start/end, hl7.org/fhir/R4/patient-operation-everything.html):
 * a resource with a `date` index row (the clinical-date parameter of its type) is kept when one
 * overlaps [low, high); a resource without one (a Patient, a Medication) is always kept.
 */
function careDateCondition(ctx: QueryContext, row: RowRef, range: { low: number; high: number }): string {
  const rowsOf = (d: string) =>
    `FROM search_date ${d} WHERE ${d}.resource_id = ${row.alias}.id AND ${d}.project_id = ${row.alias}.project_id AND ${d}.resource_type = ${row.alias}.resource_type AND ${d}.code = 'date'`;
  const any = ctx.alias('d');
  const within = ctx.alias('d');
  const low = ctx.bind(toTimestamp(clampMs(range.low)), 'timestamptz');
  const high = ctx.bind(toTimestamp(clampMs(range.high)), 'timestamptz');
  return `(NOT EXISTS (SELECT 1 ${rowsOf(any)}) OR EXISTS (SELECT 1 ${rowsOf(within)} AND ${within}.high > ${low} AND ${within}.low < ${high}))`;
}

export function compileSearch(
  ctx: QueryContext,
  request: SearchRequest,
  compartment?: CompartmentRef,
  careDates?: { low: number; high: number },
): CompiledSearch {
  const types = searchTypes(request, compartment);
  const single = types.length === 1 ? types[0] : undefined;
  const row: RowRef = { alias: 'r', resourceType: single };
  for (const t of types) {
    ctx.access?.assertInteraction?.(t, 'search');
  }
  const where = visibleRow(ctx, 'r', single);
  let from: string;
  if (single) {
    from = resourceTable(single);
  } else {
    from = 'resource';
    where.push(`r.resource_type = ANY(${ctx.bind(types, 'text[]')})`);
  }
  if (compartment) {
    where.push(compartmentCondition(ctx, row, types, compartment));
  }
  if (careDates) {
    where.push(careDateCondition(ctx, row, careDates));
  }
  if ((request.filters?.length ?? 0) > MAX_FILTERS) {
    fail(badRequest(`A search may have at most ${MAX_FILTERS} parameters`));
  }
  const visible = [...where];
  const warnings = ctx.warnings.length;
  const sort = planSort(ctx, row, request.sortRules ?? [], !single);
  const filters = (request.filters ?? []) as Filter[];
  ctx.idsPinned = filters.some((f) => f.code === '_id' && f.operator === Operator.EQUALS && f.value !== '');
  const byToken = tokenSortJoin(ctx, row, sort, filters);
  const phase0Where = [...where];
  let withValueOnly = false;
  for (const filter of filters) {
    const cond = compileFilter(ctx, row, filter, single ? undefined : types);
    if (cond === undefined) continue;
    where.push(cond);
    const onSortRow = sortRowCondition(ctx, row, sort, filter, cond);
    withValueOnly ||= onSortRow !== undefined;
    // Through the token join, the sort row is not joined: filters on the sort date keep their
    // EXISTS, checked per row read in index order. Wrapped, so that the planner does not turn it
    // into a semi-join whose join orders it would weigh: that halved the planning (0.7 -> 0.3 ms).
    if (byToken?.filter === filter) continue;
    phase0Where.push(byToken ? (onSortRow ? `COALESCE(${cond}, false)` : cond) : (onSortRow ?? cond));
  }
  if (request.filter) {
    const cond = compileFhirFilter(ctx, row, request.filter);
    where.push(cond);
    phase0Where.push(cond);
  }
  const phase0Join = byToken ? { clause: byToken.clause, key: byToken.key } : undefined;
  // Unsorted, and every filter understood (a second compilation must not warn twice).
  const byIds =
    single && !compartment && !request.filter && !request.sortRules?.length && ctx.warnings.length === warnings
      ? candidateRows(ctx, single, filters)
      : undefined;
  const candidates = byIds ? { ...byIds, visible } : undefined;
  return { from, where, phase0Where, withValueOnly, sort, row, types, phase0Join, candidates };
}

/**
 * A filter on the parameter the page is sorted by (`date=ge2020&_sort=-date`), checked on the
 * joined sort row when that row is the resource's only value of the parameter (is_min and
 * is_max), which spares a semi-join per scanned row; resources with several values still go
 * through the filter's own EXISTS. Undefined when the filter is not of that kind.
 */
function sortRowCondition(
  ctx: QueryContext,
  row: RowRef,
  sort: SortPlan,
  filter: Filter,
  general: string,
): string | undefined {
  const join = sort.join;
  if (!join || !row.resourceType || filter.code !== join.code) return undefined;
  const param = ctx.param(row.resourceType, filter.code);
  if (!param || param.column || !['date', 'number', 'quantity', 'string', 'token', 'uri'].includes(param.type)) {
    return undefined;
  }
  // :missing asks about all rows; :text may match a row that is never the sort row (a text alone).
  if (filter.operator === Operator.MISSING || filter.operator === Operator.TEXT) return undefined;
  const match = rowMatch(ctx, param, filter);
  if (!match || match.negate || match.kind !== join.kind || match.code !== join.code) return undefined;
  const s = join.alias;
  return `((${s}.is_min AND ${s}.is_max AND (${match.predicate.replaceAll('\u0000', s)})) OR (NOT (${s}.is_min AND ${s}.is_max) AND ${general}))`;
}
