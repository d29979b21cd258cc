import { badRequest, fail, Operator } from '@hearth/core';
import { unescapeValue } from '../query/context.js';
import { parseReference } from './reference-index.js';
import { anyOf, type KindQuery } from './match.js';
import { tokenQuery } from './token-query.js';

/**
 * Reference search (hl7.org/fhir/R4/search.html#reference): `Type/id`, a bare `id` (of the
 * `:Type` given, else of any allowed type), an absolute URL (local when on this server's base),
 * a canonical (`url|version` matches the url), `:identifier` (the reference's identifier, as a
 * token). `:missing` is handled for every kind by the caller.
 */
export function referenceQuery(typeModifier?: string): KindQuery {
  return (ctx, x, items, filter, param, modifier) => {
    if (modifier === Operator.IDENTIFIER) {
      const m = tokenQuery(ctx, x, items, filter, param);
      return { ...m, code: `${param.code}:identifier` };
    }
    if (modifier) {
      fail(badRequest(`Modifier :${modifier} is not supported on reference parameter ${filter.code}`, filter.code));
    }
    const ids: string[] = [];
    const preds: string[] = [];
    for (const item of items) {
      const text = unescapeValue(item.text).trim();
      if (!text) {
        fail(badRequest(`Empty reference for search parameter ${filter.code}`, filter.code));
      }
      if (!text.includes('/') && !text.includes(':') && !text.startsWith('#')) {
        ids.push(text);
        continue;
      }
      const parsed = parseReference(text, ctx.fhirBase);
      if (parsed.targetId) {
        if (typeModifier && parsed.targetType !== typeModifier) {
          preds.push('false');
          continue;
        }
        preds.push(
          `${x}.target_id = ${ctx.bind(parsed.targetId)} AND ${x}.target_type = ${ctx.bind(parsed.targetType)}`,
        );
      } else {
        preds.push(`${x}.ref = ${ctx.bind(parsed.ref)}`);
      }
    }
    if (ids.length > 0) {
      const idPred =
        ids.length === 1 ? `${x}.target_id = ${ctx.bind(ids[0])}` : `${x}.target_id = ANY(${ctx.bind(ids, 'text[]')})`;
      preds.unshift(typeModifier ? `${idPred} AND ${x}.target_type = ${ctx.bind(typeModifier)}` : idPred);
    }
    return { kind: 'reference', code: param.code, predicate: anyOf(preds) };
  };
}
