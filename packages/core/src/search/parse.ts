import { badRequest, fail } from '../outcome.js';
import { printableText, unstorableCharacter } from '../storable-text.js';
import {
  MODIFIER_OPERATORS,
  Operator,
  PREFIX_OPERATORS,
  type Filter,
  type IncludeTarget,
  type SearchRequest,
  type SearchSummary,
  type SearchTotal,
  type SortRule,
} from './types.js';

/** Search parameter types (hl7.org/fhir/R4/search.html#ptypes). */
export type SearchParamType =
  'number' | 'date' | 'string' | 'token' | 'reference' | 'composite' | 'quantity' | 'uri' | 'special';

export interface ParseSearchOptions {
  /**
   * The type of a parameter (its code as written, chains included), when known. Value prefixes
   * are only read for number, date and quantity parameters; without this, a value is read as
   * prefixed when a prefix is followed by a digit or a sign.
   */
  paramType?: (resourceType: string, code: string) => SearchParamType | undefined;
}

export type SearchQueryInput =
  URLSearchParams | Record<string, string | number | boolean | readonly (string | number | boolean)[] | undefined>;

const PREFIX_SET = new Set<string>(PREFIX_OPERATORS);
const MODIFIER_SET = new Set<string>(MODIFIER_OPERATORS);
const PREFIX_TYPES = new Set<SearchParamType>(['number', 'date', 'quantity']);

/**
 * Parses a search into a SearchRequest: either a URL or relative path ('Patient?name=smith',
 * 'https://host/fhir/R4/Patient?name=smith') or a resource type and its query.
 */
export function parseSearchRequest(url: string, options?: ParseSearchOptions): SearchRequest;
export function parseSearchRequest(
  resourceType: string,
  query: SearchQueryInput | undefined,
  options?: ParseSearchOptions,
): SearchRequest;
export function parseSearchRequest(
  first: string,
  second?: SearchQueryInput | ParseSearchOptions,
  third?: ParseSearchOptions,
): SearchRequest {
  if (second === undefined || !isQueryInput(second)) {
    const { resourceType, query } = splitUrl(first);
    return parseQuery(resourceType, query, second as ParseSearchOptions | undefined);
  }
  return parseQuery(first, toEntries(second), third);
}

function isQueryInput(value: SearchQueryInput | ParseSearchOptions): value is SearchQueryInput {
  if (value instanceof URLSearchParams) {
    return true;
  }
  return typeof (value as ParseSearchOptions).paramType !== 'function';
}

function splitUrl(url: string): { resourceType: string; query: [string, string][] } {
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  const search = q < 0 ? '' : url.slice(q + 1);
  path = path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  const segments = path.split('/').filter(Boolean);
  const last = segments.length > 0 ? segments[segments.length - 1] : '';
  const resourceType = last === '_search' ? (segments[segments.length - 2] ?? '') : last;
  return {
    resourceType: /^[A-Z][A-Za-z]*$/.test(resourceType) ? resourceType : '',
    query: [...new URLSearchParams(search)],
  };
}

function toEntries(input: SearchQueryInput): [string, string][] {
  if (input instanceof URLSearchParams) {
    return [...input];
  }
  const out: [string, string][] = [];
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) {
      continue;
    }
    for (const v of Array.isArray(value) ? value : [value]) {
      out.push([key, String(v)]);
    }
  }
  return out;
}

function parseQuery(resourceType: string, entries: [string, string][], options?: ParseSearchOptions): SearchRequest {
  const request: SearchRequest = { resourceType };
  for (const [key, value] of entries) {
    assertStorable(key, value);
    parseEntry(request, key, value, options);
  }
  return request;
}

/**
 * A search compares its values with stored text, so they must be text the database can hold.
 * The server checks the request's own query string at its boundary; this catches query strings
 * that arrive inside other input and are decoded only here (a transaction entry's URL,
 * If-None-Exist, a conditional reference, a subscription's criteria, a GraphQL argument).
 */
function assertStorable(key: string, value: string): void {
  const bad = unstorableCharacter(key) ?? unstorableCharacter(value);
  if (bad) {
    const name = printableText(key);
    fail(badRequest(`Search parameter ${name} contains ${bad}, which is not allowed`, name));
  }
}

function parseEntry(request: SearchRequest, key: string, value: string, options?: ParseSearchOptions): void {
  const [name, ...mods] = key.split(':');
  switch (name) {
    case '_sort':
      request.sortRules = [...(request.sortRules ?? []), ...parseSort(value)];
      return;
    case '_count':
      request.count = parseNonNegativeInt(value, '_count');
      return;
    case '_offset':
      request.offset = parseNonNegativeInt(value, '_offset');
      return;
    case '_cursor':
      request.cursor = value;
      return;
    case '_include':
    case '_revinclude': {
      const target = parseInclude(value, mods, key);
      if (name === '_include') {
        request.include = [...(request.include ?? []), target];
      } else {
        request.revInclude = [...(request.revInclude ?? []), target];
      }
      return;
    }
    case '_total':
      if (!['none', 'estimate', 'accurate'].includes(value)) {
        fail(badRequest(`_total must be none, estimate or accurate, not "${value}"`, '_total'));
      }
      request.total = value as SearchTotal;
      return;
    case '_summary':
      if (!['true', 'false', 'text', 'data', 'count'].includes(value)) {
        fail(badRequest(`_summary must be one of true, false, text, data, count, not "${value}"`, '_summary'));
      }
      request.summary = value as SearchSummary;
      return;
    case '_elements':
      request.fields = [...(request.fields ?? []), ...splitList(value)];
      return;
    case '_type':
      request.types = [...(request.types ?? []), ...splitList(value)];
      return;
    case '_filter':
      request.filter = request.filter ? `(${request.filter}) and (${value})` : value;
      return;
    case '_format':
      request.format = value;
      return;
    case '_pretty':
      request.pretty = value === 'true';
      return;
    case '_query':
      request.name = value;
      return;
    default:
      request.filters = [...(request.filters ?? []), parseFilter(request.resourceType, key, value, options)];
  }
}

function parseNonNegativeInt(value: string, name: string): number {
  if (!/^\d{1,9}$/.test(value.trim())) {
    fail(badRequest(`${name} must be a non-negative integer, not "${value}"`, name));
  }
  return Number(value.trim());
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseSort(value: string): SortRule[] {
  return splitList(value).map((item) =>
    item.startsWith('-') ? { code: item.slice(1), descending: true } : { code: item },
  );
}

function parseInclude(value: string, mods: string[], key: string): IncludeTarget {
  const parts = value.split(':');
  if (value === '*') {
    return withIterate({ resourceType: '*', searchParam: '*' }, mods);
  }
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) {
    fail(badRequest(`${key} must be ResourceType:searchParam[:targetType], not "${value}"`, key));
  }
  const target: IncludeTarget = { resourceType: parts[0], searchParam: parts[1] };
  if (parts[2]) {
    target.targetType = parts[2];
  }
  return withIterate(target, mods);
}

function withIterate(target: IncludeTarget, mods: string[]): IncludeTarget {
  // `:recurse` is the R3 name of `:iterate`.
  if (mods.includes('iterate') || mods.includes('recurse')) {
    target.modifier = 'iterate';
  }
  return target;
}

/**
 * Splits a parameter name into the code and an operator modifier. The modifier is the last
 * ':x' of the last chain link when x is a known modifier; anything else (a type modifier like
 * 'subject:Patient') stays in the code.
 */
export function splitModifier(key: string): { code: string; modifier?: Operator } {
  if (key.startsWith('_has:')) {
    // _has:Type:reference:param[:modifier]
    const parts = key.split(':');
    if (parts.length >= 5 && MODIFIER_SET.has(parts[parts.length - 1])) {
      return { code: parts.slice(0, -1).join(':'), modifier: parts[parts.length - 1] as Operator };
    }
    return { code: key };
  }
  const dot = key.lastIndexOf('.');
  const colon = key.lastIndexOf(':');
  if (colon > dot) {
    const mod = key.slice(colon + 1);
    if (MODIFIER_SET.has(mod)) {
      return { code: key.slice(0, colon), modifier: mod as Operator };
    }
  }
  return { code: key };
}

function parseFilter(resourceType: string, key: string, value: string, options?: ParseSearchOptions): Filter {
  const { code, modifier } = splitModifier(key);
  if (modifier) {
    return { code, operator: modifier, value };
  }
  const type = options?.paramType?.(resourceType, code);
  const prefixable = type ? PREFIX_TYPES.has(type) : undefined;
  // Several values may each carry their own prefix; only a single value's prefix moves to the operator.
  if (prefixable !== false && !hasUnescapedComma(value)) {
    const prefix = value.slice(0, 2);
    if (PREFIX_SET.has(prefix) && (prefixable === true || /^[-+]?\d/.test(value.slice(2)))) {
      return { code, operator: prefix as Operator, value: value.slice(2) };
    }
  }
  return { code, operator: Operator.EQUALS, value };
}

function hasUnescapedComma(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') {
      i++;
    } else if (value[i] === ',') {
      return true;
    }
  }
  return false;
}

/**
 * Splits a value on unescaped `sep` (',' for OR alternatives, '|' for token and quantity parts,
 * '$' for composite parts) and removes the escapes that protect the separators
 * (hl7.org/fhir/R4/search.html#escaping). With `unescape` false the escapes are kept, for a
 * second split.
 */
export function splitSearchValue(value: string, sep = ',', unescape = true): string[] {
  if (!value.includes('\\')) {
    return value.split(sep);
  }
  // Slices between escapes and separators, not a character at a time: a value can be megabytes.
  const out: string[] = [];
  let current = '';
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && i + 1 < value.length) {
      const next = value[i + 1];
      if (unescape && (next === ',' || next === '|' || next === '$' || next === '\\')) {
        current += value.slice(start, i) + next;
        start = i + 2;
      }
      i++;
    } else if (c === sep) {
      out.push(current + value.slice(start, i));
      current = '';
      start = i + 1;
    }
  }
  out.push(current + value.slice(start));
  return out;
}

/** Escapes the characters that separate search values (`\` `,` `|` `$`). */
export function escapeSearchValue(value: string): string {
  return value.replace(/[\\,|$]/g, (c) => `\\${c}`);
}
