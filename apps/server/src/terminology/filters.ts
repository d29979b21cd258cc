import { badRequest, fail, type ValueSetComposeIncludeFilter } from '@hearth/core';
import type { CodeSystemRow } from './resolve.js';

/** Appends a parameter and returns its placeholder. */
export type Param = (value: unknown) => string;

const CLOSURE = 'terminology_concept_closure';
const PARENT = 'terminology_concept_parent';

/** Properties that name the concept itself rather than one of its properties. */
const CODE_PROPERTIES = new Set(['concept', 'code']);

/**
 * One compose filter as a SQL predicate on concept alias `c` (hl7.org/fhir/R4/valueset.html#filters,
 * R4 filter-operator codes). Hierarchy operators use the closure table; `=`, `in`, `regex` and
 * `exists` use the concept's code or display, its parent links, or its property values.
 */
export function filterSql(cs: CodeSystemRow, filter: ValueSetComposeIncludeFilter, p: Param): string {
  const { property, op, value } = filter;
  if (typeof property !== 'string' || typeof op !== 'string' || typeof value !== 'string') {
    fail(badRequest('A compose filter needs property, op and value', 'ValueSet.compose.include.filter'));
  }
  // Allocated on first use: an unused parameter has no type and PostgreSQL rejects the statement.
  let csParam: string | undefined;
  const csId = (): string => (csParam ??= p(cs.id));
  const isA = (v: string): string =>
    `(c.code = ${p(v)} OR c.code IN (SELECT descendant FROM ${CLOSURE} WHERE code_system_id = ${csId()} AND ancestor = ${p(v)}))`;
  switch (op) {
    case 'is-a':
      return isA(value);
    case 'descendent-of':
      return `c.code IN (SELECT descendant FROM ${CLOSURE} WHERE code_system_id = ${csId()} AND ancestor = ${p(value)})`;
    case 'is-not-a':
      return `NOT ${isA(value)}`;
    case 'generalizes':
      return `(c.code = ${p(value)} OR c.code IN (SELECT ancestor FROM ${CLOSURE} WHERE code_system_id = ${csId()} AND descendant = ${p(value)}))`;
    case '=':
      return valueMatch(cs, property, [value], p, csId);
    case 'in':
      return valueMatch(cs, property, splitList(value), p, csId);
    case 'not-in':
      return `NOT ${valueMatch(cs, property, splitList(value), p, csId)}`;
    case 'regex':
      return regexMatch(property, value, p);
    case 'exists':
      return exists(property, value, p, csId);
    default:
      fail(badRequest(`Unknown filter operator "${String(op)}"`, 'ValueSet.compose.include.filter.op'));
  }
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

function valueMatch(cs: CodeSystemRow, property: string, values: string[], p: Param, csId: () => string): string {
  if (!CODE_PROPERTIES.has(property) && property !== 'display' && property !== 'parent' && property !== 'child') {
    if (values.length === 1) {
      // Uses the jsonb_path_ops index on property_values.
      return `c.property_values @> jsonb_build_object(${p(property)}::text, jsonb_build_array(${p(values[0])}::text))`;
    }
  }
  const list = `${p(values)}::text[]`;
  if (CODE_PROPERTIES.has(property)) {
    return cs.caseSensitive ? `c.code = ANY(${list})` : `lower(c.code) = ANY(SELECT lower(x) FROM unnest(${list}) x)`;
  }
  if (property === 'display') {
    return `c.display = ANY(${list})`;
  }
  const propertyMatch = `EXISTS (SELECT 1 FROM jsonb_array_elements_text(c.property_values -> ${p(property)}::text) v WHERE v = ANY(${list}))`;
  if (property === 'parent') {
    return `(${propertyMatch} OR EXISTS (SELECT 1 FROM ${PARENT} l WHERE l.code_system_id = ${csId()} AND l.child = c.code AND l.parent = ANY(${list})))`;
  }
  if (property === 'child') {
    return `(${propertyMatch} OR EXISTS (SELECT 1 FROM ${PARENT} l WHERE l.code_system_id = ${csId()} AND l.parent = c.code AND l.child = ANY(${list})))`;
  }
  return propertyMatch;
}

/** The whole value must match (FHIR regexes are anchored, like XML Schema patterns). */
function regexMatch(property: string, value: string, p: Param): string {
  checkRegex(value);
  const pattern = `${p(`^(?:${value})$`)}`;
  if (CODE_PROPERTIES.has(property)) {
    return `c.code ~ ${pattern}`;
  }
  if (property === 'display') {
    return `c.display ~ ${pattern}`;
  }
  return `EXISTS (SELECT 1 FROM jsonb_array_elements_text(c.property_values -> ${p(property)}::text) v WHERE v ~ ${pattern})`;
}

function exists(property: string, value: string, p: Param, csId: () => string): string {
  if (value !== 'true' && value !== 'false') {
    fail(badRequest(`The exists filter takes true or false, not "${value}"`, 'ValueSet.compose.include.filter.value'));
  }
  let sql: string;
  if (property === 'parent') {
    sql = `EXISTS (SELECT 1 FROM ${PARENT} l WHERE l.code_system_id = ${csId()} AND l.child = c.code)`;
  } else if (property === 'child') {
    sql = `EXISTS (SELECT 1 FROM ${PARENT} l WHERE l.code_system_id = ${csId()} AND l.parent = c.code)`;
  } else if (property === 'display') {
    sql = 'c.display IS NOT NULL';
  } else if (property === 'definition') {
    sql = 'c.definition IS NOT NULL';
  } else {
    sql = `c.property_values ? ${p(property)}::text`;
  }
  return value === 'true' ? sql : `NOT ${sql}`;
}

/** Rejects patterns PostgreSQL cannot compile before they reach SQL (a 400, not a 500). */
export function checkRegex(pattern: string): void {
  if (pattern.length > 1000) {
    fail(badRequest('Regular expression is too long', 'ValueSet.compose.include.filter.value'));
  }
  try {
    new RegExp(pattern, 'u');
  } catch {
    fail(badRequest(`Invalid regular expression "${pattern}"`, 'ValueSet.compose.include.filter.value'));
  }
}

/** Escapes LIKE wildcards so user text matches literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The $expand `filter` text as a predicate on member alias `m`: every word occurs in the display
 * (case-insensitive; trigram-indexed), or the text starts the code.
 */
export function textFilterSql(text: string, p: Param, alias = 'm'): string {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean).slice(0, 10);
  if (words.length === 0) {
    return 'TRUE';
  }
  const display = words.map((w) => `lower(${alias}.display) LIKE ${p(`%${escapeLike(w)}%`)}`).join(' AND ');
  return `((${display}) OR lower(${alias}.code) LIKE ${p(`${escapeLike(text.trim().toLowerCase())}%`)})`;
}
