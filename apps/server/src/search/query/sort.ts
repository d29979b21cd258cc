import { badRequest, fail, type SortRule } from '@hearth/core';
import { TABLES, type Kind } from '../index/rows.js';
import type { SortColumn } from '../kinds/kind.js';
import { kindOf } from '../kinds/registry.js';
import type { ParamDef } from '../registry/params.js';
import type { QueryContext } from './context.js';
import type { RowRef } from './row.js';

export type KeyType = SortColumn['type'] | 'uuid';

/** One ORDER BY key, with what the keyset cursor needs to continue after a row. */
export interface SortKey {
  expr: string;
  type: KeyType;
  descending: boolean;
  /** Keys read through a subquery may be NULL (the resource has no value): NULLS LAST. */
  nullable: boolean;
}

/**
 * The order of a search. The first key, when it is a parameter, is read by joining the row that
 * holds the resource's smallest (ascending) or largest (descending) value, so an index on that
 * value can deliver rows in order and stop at the page size; resources without a value come
 * after, in a second phase (`missing`). Later keys are correlated subqueries.
 */
export interface SortPlan {
  join?: { clause: string; missing: string; key: SortKey; alias: string; code: string; kind: Kind };
  keys: SortKey[];
  /** Identifies the order, so a cursor from another order is refused. */
  signature: string;
}

interface KeyColumn extends SortColumn {
  kind: Kind;
}

function keyColumn(param: ParamDef): KeyColumn | undefined {
  const kind = kindOf(param.type);
  return kind?.table && kind.sort ? { kind: kind.table, ...kind.sort } : undefined;
}

function rowJoin(ctx: QueryContext, row: RowRef, x: string, code: string): string {
  const type = row.resourceType ? ctx.bind(row.resourceType) : `${row.alias}.resource_type`;
  return `${x}.resource_id = ${row.alias}.id AND ${x}.project_id = ${row.alias}.project_id AND ${x}.resource_type = ${type} AND ${x}.code = ${ctx.bind(code)}`;
}

/** Compiles _sort (hl7.org/fhir/R4/search.html#_sort) for rows `row`; the id always breaks ties. */
export function planSort(ctx: QueryContext, row: RowRef, rules: SortRule[], systemSearch: boolean): SortPlan {
  const r = row.alias;
  const plan: SortPlan = { keys: [], signature: rules.map((s) => (s.descending ? '-' : '') + s.code).join(',') };
  rules.forEach((rule, i) => {
    const descending = !!rule.descending;
    if (rule.code === '_id') {
      plan.keys.push({ expr: `${r}.id`, type: 'text', descending, nullable: false });
      return;
    }
    if (rule.code === '_lastUpdated') {
      plan.keys.push({ expr: `${r}.last_updated`, type: 'timestamptz', descending, nullable: false });
      return;
    }
    const param = row.resourceType ? ctx.param(row.resourceType, rule.code) : undefined;
    const column = param && !param.column ? keyColumn(param) : undefined;
    if (!param || !column) {
      if (systemSearch || !param) {
        ctx.unsupported(`Cannot sort by "${rule.code}"${row.resourceType ? ` on ${row.resourceType}` : ''}`, '_sort');
        return;
      }
      fail(badRequest(`Cannot sort by ${param.type} parameter "${rule.code}"`, '_sort'));
    }
    const table = TABLES[column.kind].table;
    const x = ctx.alias('s');
    if (i === 0 && plan.keys.length === 0) {
      const flag = descending ? 'is_max' : 'is_min';
      const expr = descending ? column.desc(x) : column.asc(x);
      plan.join = {
        clause: `JOIN ${table} ${x} ON ${rowJoin(ctx, row, x, param.code)} AND ${x}.${flag}`,
        // No sort row: no value, or only rows without one (a CodeableConcept's text alone).
        missing: `NOT EXISTS (SELECT 1 FROM ${table} ${x} WHERE ${rowJoin(ctx, row, x, param.code)} AND ${x}.${flag})`,
        key: { expr, type: column.type, descending, nullable: false },
        alias: x,
        code: param.code,
        kind: column.kind,
      };
      return;
    }
    const agg = descending ? `max(${column.desc(x)})` : `min(${column.asc(x)})`;
    plan.keys.push({
      expr: `(SELECT ${agg} FROM ${table} ${x} WHERE ${rowJoin(ctx, row, x, param.code)})`,
      type: column.type,
      descending,
      nullable: true,
    });
  });
  if (systemSearch) {
    plan.keys.push({ expr: `${r}.resource_type`, type: 'text', descending: false, nullable: false });
  }
  plan.keys.push({ expr: `${r}.id`, type: 'text', descending: false, nullable: false });
  plan.keys.push({ expr: `${r}.project_id`, type: 'uuid', descending: false, nullable: false });
  return plan;
}

export function orderBy(keys: SortKey[]): string {
  return keys.map((k) => `${k.expr}${k.descending ? ' DESC' : ''}${k.nullable ? ' NULLS LAST' : ''}`).join(', ');
}

/**
 * Rows strictly after `values` in the order of `keys` (a keyset condition): k1 after v1, or k1
 * equal and the rest after. NULLs (no value) sort last in either direction.
 */
export function afterCondition(ctx: QueryContext, keys: SortKey[], values: (string | null)[]): string {
  // One direction and no NULLs: a row comparison, which an index on the keys serves directly.
  const plain = keys.every((k) => !k.nullable) && values.every((v) => v !== null && v !== undefined);
  if (plain && keys.every((k) => k.descending === keys[0].descending)) {
    const bounds = keys.map((k, i) => ctx.bind(values[i], k.type));
    return `(${keys.map((k) => k.expr).join(', ')}) ${keys[0].descending ? '<' : '>'} (${bounds.join(', ')})`;
  }
  const build = (i: number): string => {
    if (i >= keys.length) return 'false';
    const k = keys[i];
    const v = values[i];
    const rest = build(i + 1);
    if (v === null || v === undefined) {
      // Only rows that also lack a value can follow; among them, the later keys decide.
      return `(${k.expr} IS NULL AND ${rest})`;
    }
    const bound = ctx.bind(v, k.type);
    const after = `${k.expr} ${k.descending ? '<' : '>'} ${bound}`;
    const afterOrNull = k.nullable ? `(${after} OR ${k.expr} IS NULL)` : after;
    return rest === 'false' ? afterOrNull : `(${afterOrNull} OR (${k.expr} = ${bound} AND ${rest}))`;
  };
  const first = keys[0];
  const v0 = values[0];
  // A redundant bound on the first key lets its index start at the cursor instead of the top.
  const start =
    !first.nullable && v0 !== null && v0 !== undefined
      ? `${first.expr} ${first.descending ? '<=' : '>='} ${ctx.bind(v0, first.type)} AND `
      : '';
  return `${start}${build(0)}`;
}
