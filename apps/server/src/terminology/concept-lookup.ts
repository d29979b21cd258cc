import type { CodeSystemConceptProperty } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import type { CodeSystemRow } from './resolve.js';

export interface ConceptDetails {
  code: string;
  display: string | null;
  definition: string | null;
  abstract: boolean;
  inactive: boolean;
  designations: unknown[] | null;
  properties: CodeSystemConceptProperty[] | null;
  parents: string[];
  children: string[];
}

/** One concept of a code system, with its direct parents and children; case-insensitive systems match any case. */
export async function findConcept(
  db: Queryable,
  cs: CodeSystemRow,
  code: string,
  withRelations = true,
): Promise<ConceptDetails | undefined> {
  const match = cs.caseSensitive ? 'code = $2' : 'lower(code) = lower($2)';
  const result = await db.query<Omit<ConceptDetails, 'parents' | 'children'>>(
    `SELECT code, display, definition, abstract, inactive, designations, properties
     FROM terminology_concept WHERE code_system_id = $1 AND ${match} LIMIT 1`,
    [cs.id, code],
  );
  const row = result.rows[0];
  if (!row) {
    return undefined;
  }
  if (!withRelations) {
    return { ...row, parents: [], children: [] };
  }
  const links = await db.query<{ parent: string; child: string }>(
    `SELECT parent, child FROM terminology_concept_parent
     WHERE code_system_id = $1 AND (child = $2 OR parent = $2) ORDER BY parent, child LIMIT 10000`,
    [cs.id, row.code],
  );
  return {
    ...row,
    parents: links.rows.filter((l) => l.child === row.code).map((l) => l.parent),
    children: links.rows.filter((l) => l.parent === row.code).map((l) => l.child),
  };
}

export type Subsumption = 'equivalent' | 'subsumes' | 'subsumed-by' | 'not-subsumed';

/** How code A relates to code B in the hierarchy (hl7.org/fhir/R4/codesystem-operation-subsumes.html). */
export async function subsumption(db: Queryable, cs: CodeSystemRow, a: string, b: string): Promise<Subsumption> {
  if (a === b) {
    return 'equivalent';
  }
  const result = await db.query<{ ancestor: string }>(
    `SELECT ancestor FROM terminology_concept_closure
     WHERE code_system_id = $1 AND ((ancestor = $2 AND descendant = $3) OR (ancestor = $3 AND descendant = $2))
     LIMIT 1`,
    [cs.id, a, b],
  );
  const row = result.rows[0];
  if (!row) {
    return 'not-subsumed';
  }
  return row.ancestor === a ? 'subsumes' : 'subsumed-by';
}
