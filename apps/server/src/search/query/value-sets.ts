import { badRequest, fail, Operator, splitSearchValue, type SearchRequest } from '@hearth/core';
import type { QueryContext, ValueSetExpander } from './context.js';

/**
 * `:in` / `:not-in` (hl7.org/fhir/R4/search.html#modifiers): the value sets named are expanded
 * before compilation by the terminology module's expander; without one, such a filter is a 400.
 */
export async function expandValueSets(
  ctx: QueryContext,
  request: SearchRequest,
  expander: ValueSetExpander | undefined,
): Promise<void> {
  for (const filter of request.filters ?? []) {
    if (filter.operator !== Operator.IN && filter.operator !== Operator.NOT_IN) continue;
    if (!expander) {
      fail(
        badRequest(`${filter.code}:${filter.operator} needs value set expansion, which is not available`, filter.code),
      );
    }
    for (const url of splitSearchValue(filter.value)) {
      if (!ctx.valueSets.has(url)) {
        ctx.valueSets.set(url, await expander(url, ctx.projectId));
      }
    }
  }
}
