import { badRequest, fail, Operator } from '@hearth/core';
import { unescapeValue } from '../query/context.js';
import { escapeLike } from '../values/strings.js';
import { anyOf, type KindQuery } from './match.js';

/** Every '/'-prefix of a URL, itself included: what `:above` matches. */
function ancestors(url: string): string[] {
  const out: string[] = [];
  const scheme = url.indexOf('://');
  for (let i = url.length; i > scheme + 3 && i > 0; i = url.lastIndexOf('/', i - 1)) {
    out.push(url.slice(0, i));
  }
  return out;
}

/** URI search (hl7.org/fhir/R4/search.html#uri): exact by default, `:below` (prefix), `:above` (ancestors). */
export const uriQuery: KindQuery = (ctx, x, items, filter, param, modifier) => {
  const preds = items.map((item) => {
    const url = unescapeValue(item.text);
    switch (modifier) {
      case undefined:
        return `${x}.value = ${ctx.bind(url)}`;
      case Operator.BELOW:
        return `${x}.value LIKE ${ctx.bind(escapeLike(url) + '%')}`;
      case Operator.ABOVE:
        return `${x}.value = ANY(${ctx.bind(ancestors(url), 'text[]')})`;
      default:
        fail(badRequest(`Modifier :${modifier} is not supported on uri parameter ${filter.code}`, filter.code));
    }
  });
  return { kind: 'uri', code: param.code, predicate: anyOf(preds) };
};
