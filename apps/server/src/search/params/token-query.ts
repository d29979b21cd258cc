import { badRequest, fail, Operator, splitSearchValue } from '@hearth/core';
import { unescapeValue, type QueryContext } from '../query/context.js';
import { subsumptionKey } from '../query/terminology.js';
import { escapeLike, normalizeString } from '../values/strings.js';
import { anyOf, type KindQuery } from './match.js';

/**
 * Token search (hl7.org/fhir/R4/search.html#token): `code`, `system|code`, `|code` (no
 * system), `system|`; `:not` (no row with the value), `:text` (display and text, word
 * prefix), `:of-type` (identifier type|value). `:in`/`:not-in` use value sets expanded before
 * compilation, `:above`/`:below` the code system's hierarchy looked up before compilation
 * (query/terminology.ts). Elements of type `code` (Patient.gender) are indexed without a system,
 * so for those modifiers a row without a system matches on its code alone.
 */
export const tokenQuery: KindQuery = (ctx, x, items, filter, param, modifier) => {
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
};

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
