import { badRequest, fail, isValidId } from '@hearth/core';
import type { SqlParam } from '../../storage/types.js';

/**
 * Turns a FHIR search (`Observation?category=laboratory`) into a SQL condition over a current row
 * under `alias` of that type. The search module provides the real one (every parameter type,
 * chains, modifiers); it throws an OperationOutcomeError for a query it cannot express.
 */
export type CriteriaCompiler = (resourceType: string, query: string, alias: string, param: SqlParam) => string;

/**
 * The parameters access rules need that live on the row itself: _id and _compartment.
 * Used until (or when) the search module provides no compiler; anything else is refused, so a
 * policy it cannot express grants nothing rather than everything.
 */
export const rowCriteriaCompiler: CriteriaCompiler = (resourceType, query, alias, param) => {
  const conditions: string[] = [];
  for (const [name, value] of new URLSearchParams(query)) {
    const values = value.split(',').filter(Boolean);
    if (name === '_id') {
      if (!values.every(isValidId)) {
        fail(badRequest(`Invalid _id in criteria of ${resourceType}`));
      }
      conditions.push(`${alias}.id = ANY(${param(values)}::text[])`);
    } else if (name === '_compartment') {
      conditions.push(`${alias}.compartments && ${param(values)}::text[]`);
    } else {
      fail(badRequest(`Search parameter "${name}" is not supported in access policy criteria here`));
    }
  }
  return conditions.length ? conditions.map((c) => `(${c})`).join(' AND ') : 'TRUE';
};

/** Splits "Type?query" (or "query") into the type it names and the query string. */
export function splitCriteria(criteria: string): { resourceType?: string; query: string } {
  const i = criteria.indexOf('?');
  if (i < 0) {
    return /^[A-Za-z]+$/.test(criteria) ? { resourceType: criteria, query: '' } : { query: criteria };
  }
  return { resourceType: criteria.slice(0, i) || undefined, query: criteria.slice(i + 1) };
}
