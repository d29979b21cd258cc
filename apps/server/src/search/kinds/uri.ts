import { badRequest, fail, Operator } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import { unescapeValue, type QueryContext } from '../query/context.js';
import { escapeLike } from '../values/strings.js';
import { anyOf, type MatchInput, type RowMatch, type SearchParamKind } from './kind.js';

/** URI values, compared exactly (hl7.org/fhir/R4/search.html#uri); a canonical's |version is kept apart. */
function indexUri(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
  for (const { value } of values) {
    const text = typeof value === 'string' ? value : (value as { reference?: unknown } | null)?.reference;
    if (typeof text !== 'string' || !text) continue;
    const v = text.slice(0, 2048);
    rows.uri.push({ code, grp, values: [v], sortLow: v, sortHigh: v });
  }
}

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
function matchUri(ctx: QueryContext, { x, items, filter, param, modifier }: MatchInput): RowMatch {
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
}

export const uriKind: SearchParamKind = {
  type: 'uri',
  prefixed: false,
  table: 'uri',
  index: (values, { code, grp }, rows) => indexUri(values, code, grp, rows),
  match: matchUri,
  sort: { asc: (x) => `${x}.value`, desc: (x) => `${x}.value`, type: 'text' },
};
