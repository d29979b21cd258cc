import { badRequest, fail, Operator, splitSearchValue, type SearchRequest } from '@hearth/core';
import type { QueryContext, ValueSetExpander } from './context.js';
import { filterValueSets, parseFilterExpression } from './filter-parse.js';

/**
 * `:in` / `:not-in` (hl7.org/fhir/R4/search.html#modifiers) and `_filter`'s `in` / `ni`: the
 * value sets named are expanded before compilation by the terminology module's expander;
 * without one, such a filter is a 400.
 */
export async function expandValueSets(
  ctx: QueryContext,
  request: SearchRequest,
  expander: ValueSetExpander | undefined,
): Promise<void> {
  const wanted: [url: string, code: string][] = [];
  for (const filter of request.filters ?? []) {
    if (filter.operator !== Operator.IN && filter.operator !== Operator.NOT_IN) continue;
    splitSearchValue(filter.value).forEach((url) => wanted.push([url, filter.code]));
  }
  if (request.filter) {
    filterValueSets(parseFilterExpression(request.filter)).forEach((url) => wanted.push([url, '_filter']));
  }
  for (const [url, code] of wanted) {
    if (!expander) {
      fail(badRequest(`${code}: value set membership needs value set expansion, which is not available`, code));
    }
    if (!ctx.valueSets.has(url)) {
      ctx.valueSets.set(url, await expander(url, ctx.projectId));
    }
  }
}
