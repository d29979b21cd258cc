import { badRequest, fail, Operator, splitSearchValue, type SearchRequest } from '@hearth/core';
import type { QueryContext, SubsumptionLookup, ValueSetExpander } from './context.js';
import { filterSubsumptions, filterValueSets, parseFilterExpression } from './filter-parse.js';

/** What terminology search needs from the terminology module (both optional: without, such filters are a 400). */
export interface TerminologyLookups {
  expandValueSet?: ValueSetExpander;
  subsumedCodes?: SubsumptionLookup;
}

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

/** The key under which a subsumption lookup is kept in QueryContext.subsumption. */
export function subsumptionKey(direction: string, system: string, code: string): string {
  return JSON.stringify([direction, system, code]);
}

/** The `system|code` pairs of a token value (OR alternatives split); pairs without both parts are skipped. */
function systemCodes(value: string): [string, string][] {
  return splitSearchValue(value, ',', false)
    .map((text) => splitSearchValue(text, '|'))
    .filter((parts): parts is [string, string] => parts.length === 2 && parts[0] !== '' && parts[1] !== '');
}

/**
 * Token `:above` / `:below` and `_filter`'s `ss` / `sb`: for each `system|code` named, the codes
 * related to it in the code system's hierarchy, as a subquery (`SELECT code …`) whose values
 * are bound in `ctx`. A code system not held here gets no entry: the token query then matches
 * the code itself. `isToken` tells which filters are on token parameters (uri has `:below` too).
 */
export async function lookUpSubsumption(
  ctx: QueryContext,
  request: SearchRequest,
  isToken: (code: string) => boolean,
  lookup: SubsumptionLookup | undefined,
): Promise<void> {
  const wanted: [direction: 'above' | 'below', value: string, code: string][] = [];
  for (const filter of request.filters ?? []) {
    if (filter.operator !== Operator.ABOVE && filter.operator !== Operator.BELOW) continue;
    if (!isToken(filter.code)) continue;
    wanted.push([filter.operator, filter.value, filter.code]);
  }
  if (request.filter) {
    for (const { op, value } of filterSubsumptions(parseFilterExpression(request.filter))) {
      // As _filter's compareParam passes token values on: ',' and '$' are literal there.
      wanted.push([op === 'ss' ? 'above' : 'below', value.replace(/[\\,$]/g, (c) => `\\${c}`), '_filter']);
    }
  }
  for (const [direction, value, code] of wanted) {
    if (!lookup) {
      fail(
        badRequest(`${code}: subsumption (:${direction}) needs the terminology module, which is not available`, code),
      );
    }
    for (const [system, value2] of systemCodes(value)) {
      const key = subsumptionKey(direction, system, value2);
      if (ctx.subsumption.has(key)) continue;
      const found = await lookup(system, value2, direction, ctx.projectId);
      if (!found) continue;
      // The lookup's SQL numbers its values from $1: rebind them into this statement's list.
      const sql = found.sql.replace(/\$(\d+)/g, (_m, n: string) => ctx.bind(found.params[Number(n) - 1]));
      ctx.subsumption.set(key, sql);
    }
  }
}
