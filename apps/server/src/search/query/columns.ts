import { badRequest, fail, Operator, type Filter } from '@hearth/core';
import { parseDateItem, rangePredicate } from '../kinds/date.js';
import { kindOf } from '../kinds/registry.js';
import type { ParamDef } from '../registry/params.js';
import { unescapeValue, valueItems, type QueryContext } from './context.js';

/**
 * Parameters read from the resource row itself: `_id` (hl7.org/fhir/R4/search.html#id),
 * `_lastUpdated` (an instant: the range [t, t + 1 ms)) and `_compartment` (the stored
 * compartments, GIN-indexed).
 */
export function columnCondition(ctx: QueryContext, r: string, param: ParamDef, filter: Filter): string {
  const modifier = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap'].includes(filter.operator)
    ? undefined
    : filter.operator;
  if (modifier === Operator.MISSING) {
    // Every resource has an id, a lastUpdated; compartments may be empty.
    const missing = filter.value === 'true';
    if (param.column === 'compartments') return missing ? `${r}.compartments = '{}'` : `${r}.compartments <> '{}'`;
    return missing ? 'false' : 'true';
  }
  const items = valueItems(filter, kindOf(param.type)?.prefixed ?? false);
  switch (param.column) {
    case 'id': {
      if (modifier && modifier !== Operator.NOT) {
        fail(badRequest(`Modifier :${modifier} is not supported on _id`, filter.code));
      }
      const ids = items.map((i) => unescapeValue(i.text));
      return modifier === Operator.NOT
        ? `${r}.id <> ALL(${ctx.bind(ids, 'text[]')})`
        : ids.length === 1
          ? `${r}.id = ${ctx.bind(ids[0])}`
          : `${r}.id = ANY(${ctx.bind(ids, 'text[]')})`;
    }
    case 'last_updated': {
      if (modifier) {
        fail(badRequest(`Modifier :${modifier} is not supported on _lastUpdated`, filter.code));
      }
      const col = `${r}.last_updated`;
      const preds = items.map((item) => {
        const range = parseDateItem(item, filter.code);
        return rangePredicate(ctx, col, `(${col} + interval '1 millisecond')`, item.prefix, range.low, range.high);
      });
      return preds.length === 1 ? preds[0] : `(${preds.map((p) => `(${p})`).join(' OR ')})`;
    }
    case 'compartments': {
      if (modifier) {
        fail(badRequest(`Modifier :${modifier} is not supported on _compartment`, filter.code));
      }
      const refs = items.map((i) => unescapeValue(i.text));
      return `${r}.compartments && ${ctx.bind(refs, 'text[]')}`;
    }
    default:
      fail(badRequest(`Search parameter ${filter.code} is not supported`, filter.code));
  }
}
