import { badRequest, fail, splitSearchValue, type Filter, type SearchParamType } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { IndexContext } from '../index/context.js';
import { TABLES, type RowSet } from '../index/rows.js';
import { valueItems, type QueryContext } from '../query/context.js';
import { rowId, type RowRef } from '../query/row.js';
import type { ParamDef } from '../registry/params.js';
import type { IndexSlot, SearchParamKind } from './kind.js';

/** The kinds a composite's parts may have (those with rows of their own table). */
export type PartKinds = (type: SearchParamType) => SearchParamKind | undefined;

/**
 * A composite's parts are indexed per element of its base expression, numbered by `grp` so that
 * a search can require both parts to come from the same element
 * (hl7.org/fhir/R4/search.html#composite). An element is indexed only when it has a value for
 * every part.
 */
function indexComposite(
  partKind: PartKinds,
  values: TypedValue[],
  slot: IndexSlot,
  rows: RowSet,
  ctx: IndexContext,
): void {
  const { param } = slot;
  const components = param.components ?? [];
  values.forEach((element, i) => {
    const found = components.map((c) => (c.evaluate ? c.evaluate([element], ctx.evaluated) : []));
    if (found.some((values) => values.length === 0)) return;
    components.forEach((component, j) => {
      partKind(component.type)?.index(found[j], { param, code: `${param.code}#${j}`, grp: i + 1 }, rows, ctx);
    });
  });
}

/**
 * Composite search (hl7.org/fhir/R4/search.html#composite): `code-value-quantity=loinc|1234$gt5`
 * needs one element whose parts match each value part: rows `code#0`, `code#1` of the same grp.
 */
function compositeCondition(
  partKind: PartKinds,
  ctx: QueryContext,
  row: RowRef,
  param: ParamDef,
  filter: Filter,
): string {
  const components = param.components ?? [];
  const alternatives = splitSearchValue(filter.value, ',', false).map((alt) => {
    const parts = splitSearchValue(alt, '$', false);
    if (parts.length !== components.length) {
      fail(badRequest(`${filter.code} needs ${components.length} parts separated by $`, filter.code));
    }
    let sql = '';
    let previous: string | undefined;
    const aliases: string[] = [];
    const clauses: string[] = [];
    components.forEach((component, j) => {
      const part = partKind(component.type);
      if (!part?.match || !part.table) {
        fail(badRequest(`${filter.code}: parts of type ${component.type} are not supported`, filter.code));
      }
      const x = ctx.alias('c');
      aliases.push(x);
      const partFilter: Filter = { code: filter.code, operator: filter.operator, value: parts[j] };
      const items = valueItems(partFilter, part.prefixed);
      const match = part.match(ctx, { x, items, filter: partFilter, param });
      const join = previous
        ? `${x}.resource_id = ${previous}.resource_id AND ${x}.project_id = ${previous}.project_id AND ${x}.resource_type = ${previous}.resource_type AND ${x}.grp = ${previous}.grp`
        : `${x}.resource_id = ${rowId(row)} AND ${x}.project_id = ${row.alias}.project_id AND ${x}.resource_type = ${row.resourceType ? ctx.bind(row.resourceType) : `${row.alias}.resource_type`}`;
      clauses.push(
        `FROM ${TABLES[match.kind].table} ${x} WHERE ${join} AND ${x}.code = ${ctx.bind(`${param.code}#${j}`)} AND (${match.predicate})`,
      );
      previous = x;
    });
    // Nest: EXISTS (part 0 AND EXISTS (part 1 AND ...)).
    for (let j = clauses.length - 1; j >= 0; j--) {
      sql = `EXISTS (SELECT 1 ${clauses[j]}${sql ? ` AND ${sql}` : ''})`;
    }
    return sql;
  });
  return alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`;
}

/** The composite kind, over the part kinds the registry gives it. */
export function compositeKind(partKind: PartKinds): SearchParamKind {
  return {
    type: 'composite',
    prefixed: false,
    index: (values, slot, rows, ctx) => indexComposite(partKind, values, slot, rows, ctx),
    condition: (ctx, row, param, filter) => compositeCondition(partKind, ctx, row, param, filter),
    // :missing asks about the first part's rows.
    missing: (param) => ({
      kind: partKind(param.components?.[0]?.type ?? 'token')?.table ?? 'token',
      code: `${param.code}#0`,
    }),
  };
}
