import { badRequest, fail, Operator } from '@hearth/core';
import { unescapeValue } from '../query/context.js';
import { phoneticKeys } from '../values/phonetic.js';
import { escapeLike, normalizeString, prefixRange } from '../values/strings.js';
import { anyOf, type KindQuery } from './match.js';

/**
 * String search (hl7.org/fhir/R4/search.html#string): by default case- and accent-insensitive
 * "starts with"; `:exact` compares the original text; `:contains` anywhere (served by the
 * trigram index); `:text` at the start of any word.
 */
export const stringQuery: KindQuery = (ctx, x, items, filter, param, modifier) => {
  if (param.code === 'phonetic' && !modifier) {
    const keys = items.flatMap((item) => phoneticKeys(unescapeValue(item.text)));
    return { kind: 'string', code: param.code, predicate: `${x}.value = ANY(${ctx.bind(keys, 'text[]')})` };
  }
  const preds = items.map((item) => {
    const raw = unescapeValue(item.text);
    const norm = normalizeString(raw);
    switch (modifier) {
      case undefined: {
        const range = prefixRange(norm);
        const low = `${x}.value >= ${ctx.bind(range.low)}`;
        return range.high === undefined ? low : `${low} AND ${x}.value < ${ctx.bind(range.high)}`;
      }
      case Operator.EXACT:
        return `${x}.value = ${ctx.bind(norm)} AND ${x}.raw = ${ctx.bind(raw)}`;
      case Operator.CONTAINS:
        return `${x}.value LIKE ${ctx.bind('%' + escapeLike(norm) + '%')}`;
      case Operator.TEXT:
        return `(${x}.value LIKE ${ctx.bind(escapeLike(norm) + '%')} OR ${x}.value LIKE ${ctx.bind('% ' + escapeLike(norm) + '%')})`;
      default:
        fail(badRequest(`Modifier :${modifier} is not supported on string parameter ${filter.code}`, filter.code));
    }
  });
  return { kind: 'string', code: param.code, predicate: anyOf(preds) };
};
