import { badRequest, fail, Operator, type Filter } from '@hearth/core';
import { isResourceTypeName, resourceTypes } from '../resource-types.js';
import { TABLES, type Kind } from '../index/rows.js';
import type { RowMatch } from '../kinds/kind.js';
import { kindOf } from '../kinds/registry.js';
import type { ParamDef } from '../registry/params.js';
import { resourceTable } from '../../storage/tables.js';
import { columnCondition } from './columns.js';
import { valueItems, type QueryContext } from './context.js';
import { rowId, type RowRef } from './row.js';

/** Most links (and modifiers) in one parameter name: chains, nested _has. */
export const MAX_LINKS = 12;

export type { RowRef };

function typeExpr(ctx: QueryContext, row: RowRef, x: string): string {
  return row.resourceType
    ? `${x}.resource_type = ${ctx.bind(row.resourceType)}`
    : `${x}.resource_type = ${row.alias}.resource_type`;
}

/** `EXISTS` (or `NOT EXISTS`) some index row of the resource meeting `match`. */
export function existsRow(
  ctx: QueryContext,
  row: RowRef,
  match: RowMatch | { kind: Kind; code: string; predicate?: string; negate?: boolean },
): string {
  const x = ctx.alias('x');
  let pred = match.predicate ? ` AND (${match.predicate.replaceAll('\u0000', x)})` : '';
  if (ctx.idBound && row.alias === 'r' && !match.negate) {
    pred += ` AND ${x}.resource_id ${ctx.idBound.op} ${ctx.bind(ctx.idBound.value)}`;
  }
  const table = TABLES[match.kind].table;
  // OFFSET 0 keeps the subquery whole (not pulled up into a join the planner could drive by value).
  const from =
    ctx.idsPinned && row.alias === 'r'
      ? `(SELECT * FROM ${table} WHERE resource_id = ${rowId(row)} AND code = ${ctx.bind(match.code)} OFFSET 0) ${x}`
      : `${table} ${x}`;
  const sql = `EXISTS (SELECT 1 FROM ${from} WHERE ${x}.resource_id = ${rowId(row)} AND ${x}.project_id = ${row.alias}.project_id AND ${typeExpr(ctx, row, x)} AND ${x}.code = ${ctx.bind(match.code)}${pred})`;
  return match.negate ? `NOT ${sql}` : sql;
}

/** Finds a parameter; for a system search, one that every searched type shares. */
function findParam(ctx: QueryContext, row: RowRef, code: string, types?: string[]): ParamDef | undefined {
  if (row.resourceType) return ctx.param(row.resourceType, code);
  const candidates = (types && types.length > 0 ? types : ['Patient']).map((t) => ctx.param(t, code));
  const first = candidates[0];
  if (!first || candidates.some((c) => !c || c.type !== first.type || c.expression !== first.expression)) {
    // Without _type, only the parameters of every resource (_id, _lastUpdated, _tag...) apply.
    return types && types.length > 0 ? undefined : first && /^_/.test(code) ? first : undefined;
  }
  return first;
}

/**
 * Compiles one filter into a condition on the resource row `row`. Returns undefined when the
 * filter was ignored (an unknown parameter under lenient handling).
 */
export function compileFilter(ctx: QueryContext, row: RowRef, filter: Filter, types?: string[]): string | undefined {
  if (filter.code.split(/[.:]/).length > MAX_LINKS) {
    fail(badRequest(`${filter.code}: chains and _has may have at most ${MAX_LINKS} links`, filter.code));
  }
  if (filter.code.startsWith('_has:')) {
    return compileHas(ctx, row, filter);
  }
  const dot = filter.code.indexOf('.');
  if (dot > 0) {
    return compileChain(ctx, row, filter, filter.code.slice(0, dot), filter.code.slice(dot + 1));
  }
  const [code, typeModifier] = filter.code.split(':');
  const param = findParam(ctx, row, code, types);
  if (!param) {
    ctx.unsupported(
      `Unknown search parameter "${code}"${row.resourceType ? ` for ${row.resourceType}` : ''}`,
      filter.code,
    );
    return undefined;
  }
  if (typeModifier && param.type !== 'reference') {
    fail(badRequest(`Modifier :${typeModifier} is not supported on ${param.type} parameter ${code}`, filter.code));
  }
  if (param.column) {
    return columnCondition(ctx, row.alias, param, filter);
  }
  const kind = kindOf(param.type);
  if (filter.operator === Operator.MISSING) {
    if (filter.value !== 'true' && filter.value !== 'false') {
      fail(badRequest(`${filter.code}:missing must be true or false`, filter.code));
    }
    const rows = kind?.missing?.(param) ?? { kind: kind?.table ?? 'token', code: param.code };
    return existsRow(ctx, row, { ...rows, negate: filter.value === 'true' });
  }
  if (kind?.condition) {
    return kind.condition(ctx, row, param, filter);
  }
  const match = rowMatch(ctx, param, filter, typeModifier);
  if (!match) {
    ctx.unsupported(`Search parameter "${code}" of type ${param.type} is not supported`, filter.code);
    return undefined;
  }
  return existsRow(ctx, row, match);
}

/** The index rows a filter on an indexed parameter asks for (predicate over the alias placeholder). */
export function rowMatch(
  ctx: QueryContext,
  param: ParamDef,
  filter: Filter,
  typeModifier?: string,
): RowMatch | undefined {
  const kind = kindOf(param.type);
  const items = valueItems(filter, kind?.prefixed ?? false);
  const modifier = filter.operator !== Operator.EQUALS && !isPrefix(filter.operator) ? filter.operator : undefined;
  return kind?.match?.(ctx, { x: '\u0000', items, filter, param, modifier, typeModifier });
}

function isPrefix(op: Operator): boolean {
  return ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap'].includes(op);
}

/** Condition on a row `alias` of `type`: readable project, not deleted, access rules. */
export function visibleRow(ctx: QueryContext, alias: string, type: string | undefined): string[] {
  // The type, even on a type's own partition: it leads the primary key (type, project, id).
  const conds = type
    ? [`${alias}.resource_type = ${ctx.bind(type)}`, `${alias}.deleted = false`]
    : [`${alias}.deleted = false`];
  const project = ctx.projectCondition(alias);
  if (project) conds.push(project);
  const access = ctx.accessCondition(type, alias);
  if (access) conds.push(`(${access})`);
  return conds;
}

/** `type` resources matching `filter`, as a subquery of ids. */
function matchingIds(ctx: QueryContext, type: string, filter: Filter): string | undefined {
  const r2 = ctx.alias('r');
  const cond = compileFilter(ctx, { alias: r2, resourceType: type }, filter);
  if (cond === undefined) return undefined;
  return `SELECT ${r2}.id FROM ${resourceTable(type)} ${r2} WHERE ${[...visibleRow(ctx, r2, type), cond].join(' AND ')}`;
}

/**
 * Chained parameters (hl7.org/fhir/R4/search.html#chaining): `subject:Patient.name=x`,
 * `subject.organization.name=x`. Without a type modifier, every allowed target type that has
 * the next parameter is searched.
 */
function compileChain(ctx: QueryContext, row: RowRef, filter: Filter, head: string, rest: string): string | undefined {
  const [code, typeModifier] = head.split(':');
  const param = findParam(ctx, row, code);
  if (!param || param.type !== 'reference') {
    ctx.unsupported(
      `"${code}" is not a reference parameter${row.resourceType ? ` of ${row.resourceType}` : ''}; it cannot be chained`,
      filter.code,
    );
    return undefined;
  }
  const nextCode = rest.split(/[.:]/)[0];
  const candidates = typeModifier ? [typeModifier] : (param.target ?? resourceTypes());
  const targets = candidates.filter((t) => nextCode.startsWith('_has') || ctx.param(t, nextCode) !== undefined);
  if (targets.length === 0) {
    ctx.unsupported(`No target type of ${code} has a search parameter "${nextCode}"`, filter.code);
    return undefined;
  }
  const sub: Filter = { code: rest, operator: filter.operator, value: filter.value };
  const branches: string[] = [];
  const c = '\u0000';
  for (const t of targets) {
    const ids = directIds(ctx, t, sub) ?? matchingIds(ctx, t, sub);
    if (ids === undefined) return undefined;
    branches.push(`${c}.target_type = ${ctx.bind(t)} AND ${c}.target_id IN (${ids})`);
  }
  const predicate = branches.length === 1 ? branches[0] : branches.map((b) => `(${b})`).join(' OR ');
  return existsRow(ctx, row, { kind: 'reference', code, predicate });
}

/**
 * The last link of a chain read straight from the index rows of the target type: cheaper than
 * going through the target's resource rows, and it also finds contained targets (indexed as
 * 'containerId#id'; hl7.org/fhir/R4/search.html#contained). Undefined when the filter needs
 * the resource rows (another chain, _has, :missing, a negation, access rules on the target).
 */
function directIds(ctx: QueryContext, type: string, filter: Filter): string | undefined {
  if (filter.code.startsWith('_has') || filter.operator === Operator.MISSING) return undefined;
  const dot = filter.code.indexOf('.');
  if (dot > 0) return chainedIds(ctx, type, filter, dot);
  const [code, typeModifier] = filter.code.split(':');
  const param = ctx.param(type, code);
  if (!param || param.column || param.type === 'composite' || param.type === 'special') return undefined;
  if (ctx.access?.readCondition?.(type, 'search', 'r', () => 'NULL')) return undefined;
  const match = rowMatch(ctx, param, filter, typeModifier);
  if (!match || match.negate) return undefined;
  const x = ctx.alias('x');
  const where = [
    `${x}.resource_type = ${ctx.bind(type)}`,
    `${x}.code = ${ctx.bind(match.code)}`,
    `(${match.predicate.replaceAll('\u0000', x)})`,
  ];
  const project = ctx.projectCondition(x);
  if (project) where.push(project);
  return `SELECT ${x}.resource_id FROM ${TABLES[match.kind].table} ${x} WHERE ${where.join(' AND ')}`;
}

/**
 * A middle link of a chain (`composition.subject.name`: the Compositions whose subject matches)
 * read from the reference rows of `type`, which contained and inline resources have too (they
 * have no resource row). Undefined when access rules on `type` need its resource rows.
 */
function chainedIds(ctx: QueryContext, type: string, filter: Filter, dot: number): string | undefined {
  if (ctx.access?.readCondition?.(type, 'search', 'r', () => 'NULL')) return undefined;
  const head = filter.code.slice(0, dot);
  const param = ctx.param(type, head.split(':')[0]);
  if (!param || param.type !== 'reference') return undefined;
  const y = ctx.alias('y');
  const link: RowRef = { alias: y, resourceType: type, idColumn: 'resource_id' };
  const cond = compileChain(ctx, link, filter, head, filter.code.slice(dot + 1));
  if (cond === undefined) return undefined;
  const where = [`${y}.resource_type = ${ctx.bind(type)}`, `${y}.code = ${ctx.bind(param.code)}`, cond];
  const project = ctx.projectCondition(y);
  if (project) where.push(project);
  return `SELECT ${y}.resource_id FROM search_reference ${y} WHERE ${where.join(' AND ')}`;
}

/**
 * Reverse chaining (hl7.org/fhir/R4/search.html#has): `_has:Observation:subject:code=x`
 * matches resources that some Observation with code x references through `subject`; nests.
 */
function compileHas(ctx: QueryContext, row: RowRef, filter: Filter): string | undefined {
  const parts = filter.code.split(':');
  if (parts.length < 4 || !parts[1] || !parts[2] || !parts[3]) {
    fail(badRequest(`_has must be _has:Type:reference:parameter, not "${filter.code}"`, filter.code));
  }
  const [, sourceType, refCode] = parts;
  const inner = parts.slice(3).join(':');
  if (!isResourceTypeName(sourceType)) {
    fail(badRequest(`Unknown resource type "${sourceType}" in ${filter.code}`, filter.code));
  }
  const refParam = ctx.param(sourceType, refCode);
  if (!refParam || refParam.type !== 'reference') {
    fail(badRequest(`"${refCode}" is not a reference parameter of ${sourceType}`, filter.code));
  }
  const h = ctx.alias('h');
  const innerFilter: Filter = { code: inner, operator: filter.operator, value: filter.value };
  const targetType = row.resourceType ? ctx.bind(row.resourceType) : `${row.alias}.resource_type`;
  const where = [
    `${h}.target_id = ${rowId(row)}`,
    `${h}.target_type = ${targetType}`,
    `${h}.resource_type = ${ctx.bind(sourceType)}`,
    `${h}.code = ${ctx.bind(refCode)}`,
  ];
  // Index rows exist only for live resources; without access rules on the source type and
  // without a filter on its resource columns, the reference row stands for the source resource.
  const innerParam = ctx.param(sourceType, inner.split(/[.:]/)[0]);
  if (!ctx.access?.readCondition?.(sourceType, 'search', 'r', () => 'NULL') && !innerParam?.column) {
    const project = ctx.projectCondition(h);
    const cond = compileFilter(ctx, { alias: h, resourceType: sourceType, idColumn: 'resource_id' }, innerFilter);
    if (cond === undefined) return undefined;
    return `EXISTS (SELECT 1 FROM search_reference ${h} WHERE ${[...where, ...(project ? [project] : []), cond].join(' AND ')})`;
  }
  const r2 = ctx.alias('r');
  const cond = compileFilter(ctx, { alias: r2, resourceType: sourceType }, innerFilter);
  if (cond === undefined) return undefined;
  where.push(...visibleRow(ctx, r2, sourceType), cond);
  return `EXISTS (SELECT 1 FROM search_reference ${h} JOIN ${resourceTable(sourceType)} ${r2} ON ${r2}.id = ${h}.resource_id AND ${r2}.project_id = ${h}.project_id WHERE ${where.join(' AND ')})`;
}
