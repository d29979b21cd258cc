import { badRequest, fail, Operator } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import { unescapeValue, type QueryContext } from '../query/context.js';
import { phoneticKeys } from '../values/phonetic.js';
import { escapeLike, MAX_INDEXED_STRING, normalizeString, prefixRange } from '../values/strings.js';
import { anyOf, type MatchInput, type RowMatch, type SearchParamKind } from './kind.js';

const NAME_PARTS = ['family', 'given', 'prefix', 'suffix', 'text'];
const ADDRESS_PARTS = ['line', 'city', 'district', 'state', 'postalCode', 'country', 'text'];

function add(rows: RowSet, code: string, grp: number, text: unknown): void {
  if (typeof text !== 'string' || text.trim() === '') return;
  if (code === 'phonetic') {
    for (const key of phoneticKeys(text)) {
      rows.string.push({ code, grp, values: [key, null], sortLow: key, sortHigh: key });
    }
    return;
  }
  const value = normalizeString(text);
  rows.string.push({
    code,
    grp,
    values: [value, text.slice(0, MAX_INDEXED_STRING * 2)],
    sortLow: value,
    sortHigh: value,
  });
}

function addParts(rows: RowSet, code: string, grp: number, v: Record<string, unknown>, parts: string[]): void {
  for (const p of parts) {
    const x = v[p];
    if (Array.isArray(x)) x.forEach((s) => add(rows, code, grp, s));
    else add(rows, code, grp, x);
  }
}

/**
 * String values (hl7.org/fhir/R4/search.html#string): each string of a HumanName or Address
 * is its own row, so `name=jo` matches a given name as well as a family name.
 */
function indexString(values: TypedValue[], code: string, grp: number, rows: RowSet): void {
  for (const { value, type } of values) {
    if (typeof value === 'string') {
      add(rows, code, grp, value);
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    const v = value as Record<string, unknown>;
    if (type === 'HumanName' || (type === undefined && ('family' in v || 'given' in v))) {
      addParts(rows, code, grp, v, NAME_PARTS);
    } else if (type === 'Address' || (type === undefined && ('line' in v || 'city' in v || 'postalCode' in v))) {
      addParts(rows, code, grp, v, ADDRESS_PARTS);
    } else {
      // Other data types: their own strings (CodeableConcept.text, Coding.display, Annotation.text...).
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === 'string' && k !== 'system' && k !== 'url' && k !== 'id') add(rows, code, grp, x);
      }
    }
  }
}

/**
 * A substring test on a row's value, through the trigram-indexed list of distinct values
 * (migration 104): the values that match, then their rows by (type, code, value).
 * `test` applies to `sst.value` (its first operand is implied).
 */
export function amongValues(x: string, test: string): string {
  return `${x}.value IN (SELECT sst.value FROM search_string_text sst WHERE sst.value ${test})`;
}

/**
 * String search (hl7.org/fhir/R4/search.html#string): by default case- and accent-insensitive
 * "starts with"; `:exact` compares the original text; `:contains` anywhere (served by the
 * trigram index of distinct values, amongValues); `:text` at the start of any word.
 */
function matchString(ctx: QueryContext, { x, items, filter, param, modifier }: MatchInput): RowMatch {
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
        return amongValues(x, `LIKE ${ctx.bind('%' + escapeLike(norm) + '%')}`);
      case Operator.TEXT:
        return amongValues(
          x,
          `LIKE ${ctx.bind(escapeLike(norm) + '%')} OR sst.value LIKE ${ctx.bind('% ' + escapeLike(norm) + '%')}`,
        );
      default:
        fail(badRequest(`Modifier :${modifier} is not supported on string parameter ${filter.code}`, filter.code));
    }
  });
  return { kind: 'string', code: param.code, predicate: anyOf(preds) };
}

export const stringKind: SearchParamKind = {
  type: 'string',
  prefixed: false,
  table: 'string',
  index: (values, { code, grp }, rows) => indexString(values, code, grp, rows),
  match: matchString,
  sort: { asc: (x) => `${x}.value`, desc: (x) => `${x}.value`, type: 'text' },
};
