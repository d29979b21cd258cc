import { MODIFIER_OPERATORS, Operator, type Filter, type IncludeTarget, type SearchRequest } from './types.js';

const MODIFIER_SET = new Set<string>(MODIFIER_OPERATORS);

/** The query parameters of a search request, in a stable order. */
export function searchRequestToParams(request: SearchRequest): [string, string][] {
  const out: [string, string][] = [];
  for (const filter of request.filters ?? []) {
    out.push(formatFilter(filter));
  }
  if (request.filter) {
    out.push(['_filter', request.filter]);
  }
  if (request.types?.length) {
    out.push(['_type', request.types.join(',')]);
  }
  if (request.sortRules?.length) {
    out.push(['_sort', request.sortRules.map((r) => (r.descending ? '-' : '') + r.code).join(',')]);
  }
  for (const inc of request.include ?? []) {
    out.push(formatInclude('_include', inc));
  }
  for (const inc of request.revInclude ?? []) {
    out.push(formatInclude('_revinclude', inc));
  }
  if (request.fields?.length) {
    out.push(['_elements', request.fields.join(',')]);
  }
  if (request.summary) {
    out.push(['_summary', request.summary]);
  }
  if (request.total) {
    out.push(['_total', request.total]);
  }
  if (request.count !== undefined) {
    out.push(['_count', String(request.count)]);
  }
  if (request.offset !== undefined) {
    out.push(['_offset', String(request.offset)]);
  }
  if (request.cursor !== undefined) {
    out.push(['_cursor', request.cursor]);
  }
  if (request.name) {
    out.push(['_query', request.name]);
  }
  if (request.format) {
    out.push(['_format', request.format]);
  }
  if (request.pretty) {
    out.push(['_pretty', 'true']);
  }
  return out;
}

function formatFilter(filter: Filter): [string, string] {
  if (MODIFIER_SET.has(filter.operator)) {
    return [`${filter.code}:${filter.operator}`, filter.value];
  }
  if (filter.operator === Operator.EQUALS || filter.operator === Operator.ITERATE) {
    return [filter.code, filter.value];
  }
  return [filter.code, `${filter.operator}${filter.value}`];
}

function formatInclude(key: string, inc: IncludeTarget): [string, string] {
  const name = inc.modifier === 'iterate' ? `${key}:iterate` : key;
  if (inc.resourceType === '*') {
    return [name, '*'];
  }
  return [name, [inc.resourceType, inc.searchParam, inc.targetType].filter(Boolean).join(':')];
}

/** The query string of a search request: '?name=smith&_count=10', or '' when there is nothing to add. */
export function formatSearchQuery(request: SearchRequest): string {
  const params = searchRequestToParams(request);
  if (params.length === 0) {
    return '';
  }
  return '?' + params.map(([k, v]) => `${encodeKey(k)}=${encodeURIComponent(v)}`).join('&');
}

/** Keys keep ':' and '.' readable (they are legal in a query string). */
function encodeKey(key: string): string {
  return encodeURIComponent(key).replace(/%3A/gi, ':');
}
