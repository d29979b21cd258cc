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

async function findOne<R>(
  db: Queryable,
  table: string,
  columns: string,
  scope: TerminologyScope,
  match: { column: 'url' | 'resource_id'; value: string },
  options: FindOptions,
  extraWhere = '',
): Promise<R | undefined> {
  const params: unknown[] = [match.value];
  const { where, order } = scopeSql(scope, params);
  let sql = `SELECT ${columns} FROM ${table} WHERE ${match.column} = $1 AND ${where} ${extraWhere}`;
  if (options.version) {
    params.push(options.version);
    sql += ` AND version = $${params.length}`;
  }
  if (options.date) {
    params.push(options.date.slice(0, 10));
    sql += ` AND (date IS NULL OR substr(date, 1, 10) <= $${params.length})`;
  }
  sql += ` ORDER BY ${order}, date DESC NULLS LAST, id DESC LIMIT 1`;
  const result = await db.query(sql, params);
  return result.rows[0] as R | undefined;
}

const CS_COLUMNS = `id, project_id AS "projectId", resource_id AS "resourceId", global, url, version, name, title,
  content, case_sensitive AS "caseSensitive", hierarchy_meaning AS "hierarchyMeaning",
  property_defs AS "propertyDefs", concept_count AS "conceptCount"`;

/** The code system a url (and optional version) names for this caller; supplements are not code systems. */
export async function findCodeSystem(
  db: Queryable,
  scope: TerminologyScope,
  url: string,
  options: FindOptions = {},
): Promise<CodeSystemRow | undefined> {
  const row = await findOne<CodeSystemRow>(
    db,
    'terminology_code_system',
    CS_COLUMNS,
    scope,
    { column: 'url', value: url },
    options,
    `AND content IS DISTINCT FROM 'supplement'`,
  );
  return row && { ...row, id: Number(row.id) };
}

export async function findCodeSystemById(
  db: Queryable,
  scope: TerminologyScope,
  resourceId: string,
): Promise<CodeSystemRow | undefined> {
  const row = await findOne<CodeSystemRow>(
    db,
    'terminology_code_system',
    CS_COLUMNS,
    scope,
    { column: 'resource_id', value: resourceId },
    {},
  );
  return row && { ...row, id: Number(row.id) };
}

const VS_COLUMNS = `id, project_id AS "projectId", resource_id AS "resourceId", url, version, name, title, status,
  compose, expansion`;

export async function findValueSet(
  db: Queryable,
  scope: TerminologyScope,
  url: string,
  options: FindOptions = {},
): Promise<ValueSetRow | undefined> {
  const row = await findOne<ValueSetRow>(
    db,
    'terminology_value_set',
    VS_COLUMNS,
    scope,
    { column: 'url', value: url },
    options,
  );
  return row && { ...row, id: Number(row.id) };
}

export async function findValueSetById(
  db: Queryable,
  scope: TerminologyScope,
  resourceId: string,
): Promise<ValueSetRow | undefined> {
  const row = await findOne<ValueSetRow>(
    db,
    'terminology_value_set',
    VS_COLUMNS,
    scope,
    { column: 'resource_id', value: resourceId },
    {},
  );
  return row && { ...row, id: Number(row.id) };
}

const CM_COLUMNS = `id, url, version, source_uri AS "sourceUri", target_uri AS "targetUri", groups`;

export async function findConceptMap(
  db: Queryable,
  scope: TerminologyScope,
  by: { url?: string; id?: string; version?: string },
): Promise<ConceptMapRow | undefined> {
  const match = by.id
    ? { column: 'resource_id' as const, value: by.id }
    : { column: 'url' as const, value: by.url ?? '' };
  const row = await findOne<ConceptMapRow>(db, 'terminology_concept_map', CM_COLUMNS, scope, match, {
    version: by.version,
  });
  return row && { ...row, id: Number(row.id) };
}

/** Every concept map visible in scope, optionally those whose source/target value set matches. */
export async function findConceptMaps(
  db: Queryable,
  scope: TerminologyScope,
  filter: { source?: string; target?: string },
): Promise<ConceptMapRow[]> {
  const params: unknown[] = [];
  const { where } = scopeSql(scope, params);
  let sql = `SELECT ${CM_COLUMNS} FROM terminology_concept_map WHERE ${where}`;
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
