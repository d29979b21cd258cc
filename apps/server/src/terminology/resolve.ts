import type { ValueSetCompose, ValueSetExpansion } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';

/**
 * Whose terminology a caller sees: its readable projects' own CodeSystems, ValueSets and
 * ConceptMaps, and always the global (R4 spec) content. Undefined projects: every project.
 * The first project is the caller's own; its definitions win over others with the same url.
 */
export interface TerminologyScope {
  projects?: string[];
}

export interface CodeSystemRow {
  id: number;
  projectId: string;
  resourceId: string;
  global: boolean;
  url: string;
  version: string | null;
  name: string | null;
  title: string | null;
  content: string | null;
  caseSensitive: boolean;
  hierarchyMeaning: string | null;
  propertyDefs: { code: string; uri?: string; type?: string; description?: string }[];
  conceptCount: number;
}

export interface ValueSetRow {
  id: number;
  projectId: string;
  resourceId: string;
  url: string | null;
  version: string | null;
  name: string | null;
  title: string | null;
  status: string | null;
  compose: ValueSetCompose | null;
  expansion: ValueSetExpansion | null;
}

export interface ConceptMapRow {
  id: number;
  url: string | null;
  version: string | null;
  sourceUri: string | null;
  targetUri: string | null;
  groups: {
    source?: string;
    target?: string;
    unmapped?: { mode?: string; code?: string; display?: string; url?: string };
  }[];
}

/** Splits a canonical reference "url|version". */
export function splitCanonical(canonical: string): { url: string; version?: string } {
  const bar = canonical.lastIndexOf('|');
  return bar < 0
    ? { url: canonical }
    : { url: canonical.slice(0, bar), version: canonical.slice(bar + 1) || undefined };
}

/** SQL for "visible in scope" and "preferred first", appending parameters to `params`. */
function scopeSql(scope: TerminologyScope, params: unknown[]): { where: string; order: string } {
  if (!scope.projects) {
    return { where: 'TRUE', order: 'global' };
  }
  params.push(scope.projects);
  const n = params.length;
  return {
    where: `(global OR project_id = ANY($${n}::uuid[]))`,
    order: `(project_id = ($${n}::uuid[])[1]) DESC, global`,
  };
}

interface FindOptions {
  version?: string;
  /** Picks the newest business version published on or before this date (R4 $expand `date`). */
  date?: string;
}

/** One kind of terminology row: its table, the columns read, and a condition every match meets. */
interface RowKind {
  table: string;
  columns: string;
  where?: string;
}

/** The row `match` names for this caller: its own project first, then global content, newest date. */
async function findOne<R extends { id: number }>(
  db: Queryable,
  kind: RowKind,
  scope: TerminologyScope,
  match: { column: 'url' | 'resource_id'; value: string },
  options: FindOptions = {},
): Promise<R | undefined> {
  const params: unknown[] = [match.value];
  const { where, order } = scopeSql(scope, params);
  let sql = `SELECT ${kind.columns} FROM ${kind.table} WHERE ${match.column} = $1 AND ${where} ${kind.where ?? ''}`;
  if (options.version) {
    params.push(options.version);
    sql += ` AND version = $${params.length}`;
  }
  if (options.date) {
    params.push(options.date.slice(0, 10));
    sql += ` AND (date IS NULL OR substr(date, 1, 10) <= $${params.length})`;
  }
  sql += ` ORDER BY ${order}, date DESC NULLS LAST, id DESC LIMIT 1`;
  const row = (await db.query(sql, params)).rows[0] as R | undefined;
  // bigserial ids arrive as strings.
  return row && { ...row, id: Number(row.id) };
}

/** Code systems; supplements are not code systems of their own. */
const CODE_SYSTEMS: RowKind = {
  table: 'terminology_code_system',
  columns: `id, project_id AS "projectId", resource_id AS "resourceId", global, url, version, name, title,
  content, case_sensitive AS "caseSensitive", hierarchy_meaning AS "hierarchyMeaning",
  property_defs AS "propertyDefs", concept_count AS "conceptCount"`,
  where: `AND content IS DISTINCT FROM 'supplement'`,
};

const VALUE_SETS: RowKind = {
  table: 'terminology_value_set',
  columns: `id, project_id AS "projectId", resource_id AS "resourceId", url, version, name, title, status,
  compose, expansion`,
};

const CONCEPT_MAPS: RowKind = {
  table: 'terminology_concept_map',
  columns: `id, url, version, source_uri AS "sourceUri", target_uri AS "targetUri", groups`,
};

/** The code system a url (and optional version) names for this caller. */
export function findCodeSystem(
  db: Queryable,
  scope: TerminologyScope,
  url: string,
  options: FindOptions = {},
): Promise<CodeSystemRow | undefined> {
  return findOne(db, CODE_SYSTEMS, scope, { column: 'url', value: url }, options);
}

export function findCodeSystemById(
  db: Queryable,
  scope: TerminologyScope,
  resourceId: string,
): Promise<CodeSystemRow | undefined> {
  return findOne(db, CODE_SYSTEMS, scope, { column: 'resource_id', value: resourceId });
}

export function findValueSet(
  db: Queryable,
  scope: TerminologyScope,
  url: string,
  options: FindOptions = {},
): Promise<ValueSetRow | undefined> {
  return findOne(db, VALUE_SETS, scope, { column: 'url', value: url }, options);
}

export function findValueSetById(
  db: Queryable,
  scope: TerminologyScope,
  resourceId: string,
): Promise<ValueSetRow | undefined> {
  return findOne(db, VALUE_SETS, scope, { column: 'resource_id', value: resourceId });
}

export function findConceptMap(
  db: Queryable,
  scope: TerminologyScope,
  by: { url?: string; id?: string; version?: string },
): Promise<ConceptMapRow | undefined> {
  const match = by.id
    ? { column: 'resource_id' as const, value: by.id }
    : { column: 'url' as const, value: by.url ?? '' };
  return findOne(db, CONCEPT_MAPS, scope, match, { version: by.version });
}

/** Every concept map visible in scope, optionally those whose source/target value set matches. */
export async function findConceptMaps(
  db: Queryable,
  scope: TerminologyScope,
  filter: { source?: string; target?: string },
): Promise<ConceptMapRow[]> {
  const params: unknown[] = [];
  const { where } = scopeSql(scope, params);
  let sql = `SELECT ${CONCEPT_MAPS.columns} FROM ${CONCEPT_MAPS.table} WHERE ${where}`;
  if (filter.source) {
    params.push(splitCanonical(filter.source).url);
    sql += ` AND split_part(source_uri, '|', 1) = $${params.length}`;
  }
  if (filter.target) {
    params.push(splitCanonical(filter.target).url);
    sql += ` AND split_part(target_uri, '|', 1) = $${params.length}`;
  }
  const result = await db.query<ConceptMapRow>(sql, params);
  return result.rows.map((r) => ({ ...r, id: Number(r.id) }));
}
