import { badRequest, fail, Operator, splitSearchValue } from '@hearth/core';
import { unescapeValue } from '../query/context.js';
import { escapeLike, normalizeString } from '../values/strings.js';
import { anyOf, type KindQuery } from './match.js';

/**
 * Token search (hl7.org/fhir/R4/search.html#token): `code`, `system|code`, `|code` (no
 * system), `system|`; `:not` (no row with the value), `:text` (display and text, word
 * prefix), `:of-type` (identifier type|value). `:in`/`:not-in` use value sets expanded before
 * compilation; `:above`/`:below` (subsumption) need a terminology server and are refused.
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
    const codes = items.flatMap((i) => ctx.valueSets.get(unescapeValue(i.text)) ?? []);
    if (!items.every((i) => ctx.valueSets.has(unescapeValue(i.text)))) {
      fail(badRequest(`${filter.code}:${modifier} needs a value set this server can expand`, filter.code));
    }
    const pairs = codes.map((c) =>
      c.system
        ? `(${x}.system = ${ctx.bind(c.system)} AND ${x}.value = ${ctx.bind(c.code)})`
        : `${x}.value = ${ctx.bind(c.code)}`,
    );
    return { kind: 'token', code, predicate: anyOf(pairs), negate: modifier === Operator.NOT_IN };
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
