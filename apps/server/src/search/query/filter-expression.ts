import { badRequest, escapeSearchValue, fail, Operator, type Filter } from '@hearth/core';
import { resourceTypes } from '../resource-types.js';
import { resourceTable } from '../../storage/tables.js';
import { clampMs, parseDateRange, toTimestamp } from '../values/dates.js';
import { escapeLike, normalizeString } from '../values/strings.js';
import { kindOf } from '../kinds/registry.js';
import { amongValues } from '../kinds/string.js';
import { compileFilter, existsRow, visibleRow, type RowRef } from './conditions.js';
import type { QueryContext } from './context.js';
import { parseFilterExpression, type FilterNode, type PathLink } from './filter-parse.js';

/**
 * `_filter` (hl7.org/fhir/R4/search_filter.html) compiled into the same SQL as the other
 * parameters: and/or/not and parentheses become SQL boolean logic; each comparison becomes the
 * filter it corresponds to (sw a string's default search, gt a date's prefix...) or, where no
 * plain parameter says it (string eq/ew, date po), a condition on the index rows; a path
 * through a reference (`subject.name`, `subject[gender eq male].name`) becomes a join on the
 * referenced resources. `ss`/`sb` follow the code system's hierarchy and `in`/`ni` expand value
 * sets, both through the terminology module (query/terminology.ts).
 */
export function compileFhirFilter(ctx: QueryContext, row: RowRef, text: string): string {
  return compileNode(ctx, row, parseFilterExpression(text));
}

function compileNode(ctx: QueryContext, row: RowRef, node: FilterNode): string {
  switch (node.kind) {
    case 'and':
      return `(${compileNode(ctx, row, node.left)} AND ${compileNode(ctx, row, node.right)})`;
    case 'or':
      return `(${compileNode(ctx, row, node.left)} OR ${compileNode(ctx, row, node.right)})`;
    case 'not':
      return `NOT (${compileNode(ctx, row, node.inner)})`;
    default:
      return compilePath(ctx, row, node.path, node);
  }
}

/** Follows a path through references to its last parameter. */
function compilePath(ctx: QueryContext, row: RowRef, path: PathLink[], node: FilterNode & { kind: 'param' }): string {
  const [link, ...rest] = path;
  if (rest.length === 0 && !link.filter) {
    return compareParam(ctx, row, link.name, node);
  }
  if (!row.resourceType) {
    fail(badRequest('_filter: paths through references need a resource type', '_filter'));
  }
  const param = ctx.param(row.resourceType, link.name);
  if (!param || param.type !== 'reference') {
    fail(badRequest(`_filter: "${link.name}" is not a reference parameter of ${row.resourceType}`, '_filter'));
  }
  // Only the target types that have every parameter the rest of the path and the bracket name.
  const needed = [...(rest.length > 0 ? [rest[0].name] : []), ...(link.filter ? paramNames(link.filter) : [])];
  const targets = (param.target ?? resourceTypes()).filter((t) =>
    needed.every((name) => ctx.param(t, name) !== undefined),
  );
  const branches = targets.map((type) => {
    const r2 = ctx.alias('r');
    const sub: RowRef = { alias: r2, resourceType: type };
    const conds = [...visibleRow(ctx, r2, type)];
    if (link.filter) conds.push(compileNode(ctx, sub, link.filter));
    if (rest.length > 0) conds.push(compilePath(ctx, sub, rest, node));
    return `\u0000.target_type = ${ctx.bind(type)} AND \u0000.target_id IN (SELECT ${r2}.id FROM ${resourceTable(type)} ${r2} WHERE ${conds.join(' AND ')})`;
  });
  if (branches.length === 0) return 'false';
  const predicate = branches.length === 1 ? branches[0] : branches.map((b) => `(${b})`).join(' OR ');
  const exists = existsRow(ctx, row, { kind: 'reference', code: param.code, predicate });
  // `subject[gender eq male] pr false`: no such target.
  return rest.length === 0 && node.op === 'pr' && node.value === 'false' ? `NOT ${exists}` : exists;
}

/** The parameter names a filter compares at its top level (first links of its paths). */
function paramNames(node: FilterNode): string[] {
  switch (node.kind) {
    case 'and':
    case 'or':
      return [...paramNames(node.left), ...paramNames(node.right)];
    case 'not':
      return paramNames(node.inner);
    default:
      return [node.path[0].name];
  }
}

const PREFIX_OPS: Record<string, Operator> = {
  eq: Operator.EQUALS,
  ne: Operator.NOT_EQUALS,
  gt: Operator.GREATER_THAN,
  lt: Operator.LESS_THAN,
  ge: Operator.GREATER_THAN_OR_EQUALS,
  le: Operator.LESS_THAN_OR_EQUALS,
  sa: Operator.STARTS_AFTER,
  eb: Operator.ENDS_BEFORE,
  ap: Operator.APPROXIMATELY,
};

function filterCondition(ctx: QueryContext, row: RowRef, filter: Filter): string {
  const cond = compileFilter(ctx, row, filter);
  if (cond === undefined) {
    fail(badRequest(`_filter: unknown parameter "${filter.code}"`, '_filter'));
  }
  return cond;
}

/** One comparison on a parameter of the row's type. */
function compareParam(ctx: QueryContext, row: RowRef, code: string, node: FilterNode & { kind: 'param' }): string {
  const param = row.resourceType ? ctx.param(row.resourceType, code) : ctx.param('Patient', code);
  if (!param) {
    fail(badRequest(`_filter: unknown search parameter "${code}"`, '_filter'));
  }
  // '|' keeps its meaning (system|code, number|system|unit); ',' and '$' are literal here.
  const value = ['token', 'quantity', 'reference'].includes(param.type)
    ? node.value.replace(/[\\,$]/g, (c) => `\\${c}`)
    : escapeSearchValue(node.value);
  const { op } = node;
  const plain = (operator: Operator, v = value): string => filterCondition(ctx, row, { code, operator, value: v });
  if (op === 'pr') {
    if (node.value !== 'true' && node.value !== 'false') {
      fail(badRequest('_filter: pr takes true or false', '_filter'));
    }
    return plain(Operator.MISSING, node.value === 'true' ? 'false' : 'true');
  }
  if (op === 'ss' || op === 'sb') {
    // ss: the resource's code subsumes the value (:above); sb: it is subsumed by it (:below).
    if (param.type !== 'token') {
      fail(badRequest(`_filter: ${op} applies to token parameters, not ${param.type} parameter ${code}`, '_filter'));
    }
    return plain(op === 'ss' ? Operator.ABOVE : Operator.BELOW, value);
  }
  if (op === 'in' || op === 'ni') {
    return plain(op === 'in' ? Operator.IN : Operator.NOT_IN, value);
  }
  if (param.type === 'string' && ['eq', 'ne', 'co', 'sw', 'ew'].includes(op)) {
    const norm = escapeLike(normalizeString(node.value));
    const like = { eq: norm, ne: norm, co: `%${norm}%`, sw: `${norm}%`, ew: `%${norm}` }[op as 'eq'];
    const match = existsRow(ctx, row, {
      kind: 'string',
      code: param.code,
      predicate: amongValues('\u0000', `LIKE ${ctx.bind(like)}`),
    });
    return op === 'ne' ? `NOT ${match}` : match;
  }
  if (param.type === 'date' && op === 'po') {
    const range = parseDateRange(node.value);
    if (!range) fail(badRequest(`_filter: invalid date "${node.value}"`, '_filter'));
    return existsRow(ctx, row, {
      kind: 'date',
      code: param.code,
      predicate: `\u0000.low < ${ctx.bind(toTimestamp(clampMs(range.high)), 'timestamptz')} AND \u0000.high > ${ctx.bind(toTimestamp(clampMs(range.low)), 'timestamptz')}`,
    });
  }
  if ((kindOf(param.type)?.prefixed || param.column === 'last_updated') && PREFIX_OPS[op]) {
    return plain(PREFIX_OPS[op]);
  }
  if (op === 'eq' || op === 're') return plain(Operator.EQUALS);
  if (op === 'ne') return `NOT (${plain(Operator.EQUALS)})`;
  if (param.type === 'uri' && op === 'sw') return plain(Operator.BELOW);
  fail(badRequest(`_filter: operator ${op} does not apply to ${param.type} parameter ${code}`, '_filter'));
}
