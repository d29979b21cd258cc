import { badRequest, fail, Operator, splitSearchValue } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { IndexRow, RowSet } from '../index/rows.js';
import { unescapeValue, type QueryContext } from '../query/context.js';
import { subsumptionKey } from '../query/terminology.js';
import { escapeLike, normalizeString } from '../values/strings.js';
import { anyOf, type MatchInput, type RowMatch, type SearchParamKind } from './kind.js';

const MAX_TOKEN = 1024;

interface Coding {
  system?: string;
  code?: string;
  display?: string;
}

function row(code: string, grp: number, system: unknown, value: unknown, text?: unknown): IndexRow {
  const v = value === undefined || value === null ? null : String(value).slice(0, MAX_TOKEN);
  const s = typeof system === 'string' ? system.slice(0, MAX_TOKEN) : null;
  const t = typeof text === 'string' && text ? normalizeString(text) : null;
  // A row without a code (a CodeableConcept's text) has nothing to sort by. The last two values
  // are the resource's date sort keys, set once all its rows are known (rows.ts stampTokenSortDates).
  return { code, grp, values: [s, v, t, null, null], sortLow: v, sortHigh: v };
}

/**
 * Token values (hl7.org/fhir/R4/search.html#token): codes, Codings and CodeableConcepts
 * (system, code, display/text for :text), Identifiers (system, value; the type as an :of-type
 * row), ContactPoints (system, value), booleans and other primitives.
 */
export function indexToken(values: TypedValue[], code: string, grp: number, rows: RowSet, withText = true): void {
  for (const { value, type } of values) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      rows.token.push(row(code, grp, null, value));
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    const v = value as Record<string, unknown>;
    if (type === 'CodeableConcept' || Array.isArray(v.coding) || (type === undefined && typeof v.text === 'string')) {
      const codings = (v.coding as Coding[] | undefined) ?? [];
      for (const c of codings) {
        if (c && (c.code !== undefined || c.system !== undefined)) {
          rows.token.push(row(code, grp, c.system, c.code, withText ? c.display : undefined));
        }
      }
      // The text gets a row of its own only when no coding's display already says it.
      if (withText && typeof v.text === 'string' && v.text) {
        const text = normalizeString(v.text);
        if (!codings.some((c) => typeof c?.display === 'string' && normalizeString(c.display) === text)) {
          rows.token.push(row(code, grp, null, null, v.text));
        }
      }
      continue;
    }
    if (type === 'ContactPoint') {
      rows.token.push(row(code, grp, v.system, v.value));
      continue;
    }
    if (type === 'Identifier' || (type === undefined && 'value' in v && !('code' in v))) {
      rows.token.push(row(code, grp, v.system, v.value, (v.type as { text?: string } | undefined)?.text));
      const typeCodings = ((v.type as { coding?: Coding[] } | undefined)?.coding ?? []).filter((c) => c?.code);
      for (const c of typeCodings) {
        rows.token.push(row(`${code}:of-type`, grp, c.system, `${c.code}|${String(v.value ?? '')}`));
      }
      continue;
    }
    if (type === 'Coding' || 'code' in v || 'system' in v) {
      rows.token.push(row(code, grp, v.system, v.code ?? v.value, v.display));
      continue;
    }
    if ('value' in v) {
      rows.token.push(row(code, grp, v.system, v.value));
    }
  }
}

/**
 * Token search (hl7.org/fhir/R4/search.html#token): `code`, `system|code`, `|code` (no
 * system), `system|`; `:not` (no row with the value), `:text` (display and text, word
 * prefix), `:of-type` (identifier type|value). `:in`/`:not-in` use value sets expanded before
 * compilation, `:above`/`:below` the code system's hierarchy looked up before compilation
 * (query/terminology.ts). Elements of type `code` (Patient.gender) are indexed without a system,
 * so for those modifiers a row without a system matches on its code alone.
 */
export function matchToken(ctx: QueryContext, { x, items, filter, param, modifier }: MatchInput): RowMatch {
  const code = param.code;
  if (modifier === Operator.TEXT) {
    const preds = items.map((i) => {
      const t = escapeLike(normalizeString(unescapeValue(i.text)));
      return `(${x}.text LIKE ${ctx.bind(t + '%')} OR ${x}.text LIKE ${ctx.bind('% ' + t + '%')})`;
    });
    return { kind: 'token', code, predicate: anyOf(preds) };
  }
  if (modifier === Operator.OF_TYPE) {
    const preds = items.map((i) => {
      const [system, typeCode, value] = splitSearchValue(i.text, '|');
      if (typeCode === undefined || value === undefined) {
        fail(badRequest(`${filter.code}:of-type needs system|code|value`, filter.code));
      }
      const parts = [`${x}.value = ${ctx.bind(`${typeCode}|${value}`)}`];
      if (system) parts.push(`${x}.system = ${ctx.bind(system)}`);
      return parts.join(' AND ');
    });
    return { kind: 'token', code: `${code}:of-type`, predicate: anyOf(preds) };
  }
  if (modifier === Operator.IN || modifier === Operator.NOT_IN) {
    if (!items.every((i) => ctx.valueSets.has(unescapeValue(i.text)))) {
      fail(badRequest(`${filter.code}:${modifier} needs a value set this server can expand`, filter.code));
    }
    const codes = items.flatMap((i) => ctx.valueSets.get(unescapeValue(i.text)) ?? []);
    return { kind: 'token', code, predicate: memberOf(ctx, x, codes), negate: modifier === Operator.NOT_IN };
  }
  if (modifier === Operator.ABOVE || modifier === Operator.BELOW) {
    const preds = items.map((i) => {
      const [system, value, extra] = splitSearchValue(i.text, '|');
      if (!system || !value || extra !== undefined) {
        fail(badRequest(`${filter.code}:${modifier} needs system|code`, filter.code));
      }
      const related = ctx.subsumption.get(subsumptionKey(modifier, system, value));
      // A code system not held here has no hierarchy to follow: the code itself.
      const values = related ? `IN (${related})` : `= ${ctx.bind(value)}`;
      return `${x}.value ${values} AND (${x}.system = ${ctx.bind(system)} OR ${x}.system IS NULL)`;
    });
    return { kind: 'token', code, predicate: anyOf(preds) };
  }
  if (modifier && modifier !== Operator.NOT) {
    fail(badRequest(`Modifier :${modifier} is not supported on token parameter ${filter.code}`, filter.code));
  }
  // Plain codes without a system: one = ANY() the planner can use as an index condition.
  const plain: string[] = [];
  const preds: string[] = [];
  for (const item of items) {
    const parts = splitSearchValue(item.text, '|');
    if (parts.length === 1) {
      plain.push(parts[0]);
    } else if (parts.length === 2) {
      const [system, value] = parts;
      if (system === '' && value === '') {
        fail(badRequest(`Invalid token "|" for search parameter ${filter.code}`, filter.code));
      }
      const conds: string[] = [];
      if (value !== '') conds.push(`${x}.value = ${ctx.bind(value)}`);
      conds.push(system === '' ? `${x}.system IS NULL` : `${x}.system = ${ctx.bind(system)}`);
      preds.push(conds.join(' AND '));
    } else {
      fail(badRequest(`Invalid token "${item.text}" for search parameter ${filter.code}`, filter.code));
    }
  }
  if (plain.length === 1) preds.unshift(`${x}.value = ${ctx.bind(plain[0])}`);
  else if (plain.length > 1) preds.unshift(`${x}.value = ANY(${ctx.bind(plain, 'text[]')})`);
  return { kind: 'token', code, predicate: anyOf(preds), negate: modifier === Operator.NOT };
}

/** Rows whose (system, code) is one of `codes`; a row without a system (a `code` element) by its code. */
function memberOf(ctx: QueryContext, x: string, codes: { system?: string; code: string }[]): string {
  if (codes.length === 0) return 'false';
  const withSystem = codes.filter((c) => c.system);
  const anySystem = codes.filter((c) => !c.system).map((c) => c.code);
  // Arrays, not one bound value per code: an expansion may hold thousands.
  const all = ctx.bind([...new Set(codes.map((c) => c.code))], 'text[]');
  const alternatives = [`${x}.system IS NULL`];
  if (withSystem.length > 0) {
    const systems = ctx.bind(
      withSystem.map((c) => c.system),
      'text[]',
    );
    const values = ctx.bind(
      withSystem.map((c) => c.code),
      'text[]',
    );
    alternatives.push(`(${x}.system, ${x}.value) IN (SELECT * FROM unnest(${systems}, ${values}))`);
  }
  if (anySystem.length > 0) alternatives.push(`${x}.value = ANY(${ctx.bind(anySystem, 'text[]')})`);
  return `${x}.value = ANY(${all}) AND (${alternatives.join(' OR ')})`;
}

export const tokenKind: SearchParamKind = {
  type: 'token',
  prefixed: false,
  table: 'token',
  // A composite's parts (grp > 0) are indexed without display and text: no modifier applies to them.
  index: (values, { code, grp }, rows) => indexToken(values, code, grp, rows, grp === 0),
  match: matchToken,
  // Rows without a code (a CodeableConcept's text) are never the sort row; min()/max() skip their NULL.
  sort: { asc: (x) => `${x}.value`, desc: (x) => `${x}.value`, type: 'text' },
};
