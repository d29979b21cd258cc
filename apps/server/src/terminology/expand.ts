import { badRequest, fail, OperationOutcomeError, tooCostly, type ValueSetExpansionContains } from '@hearth/core';
import { pgErrorCode, type Queryable } from '../platform/postgres.js';
import { ComposeCompiler, type ValueSetDefinition } from './compile.js';
import { escapeLike } from './filters.js';
import type { TerminologyScope } from './resolve.js';

/** Most codes one $expand returns without paging (count/offset). */
export const MAX_EXPANSION = 10_000;
const PG_INVALID_REGEX = '2201B';

export interface ExpandParams {
  /** Text the display must contain (every word), or the code start with: type-ahead. */
  filter?: string;
  count?: number;
  offset?: number;
  /** Chooses value set and code system business versions as of this date. */
  date?: string;
  activeOnly?: boolean;
  /** Leaves out abstract (not selectable) codes. */
  excludeNotForUI?: boolean;
  includeDesignations?: boolean;
}

export type ExpansionEntry = ValueSetExpansionContains & { code: string };

export interface ExpansionPage {
  total: number;
  offset: number;
  contains: ExpansionEntry[];
}

interface MemberRow {
  system: string | null;
  version: string | null;
  code: string;
  display: string | null;
  abstract: boolean;
  inactive: boolean;
  designations: unknown[] | null;
  total?: number;
}

/** Runs terminology SQL, turning an invalid regular expression into a 400. */
export async function runTerminologyQuery<R extends object>(
  db: Queryable,
  sql: string,
  params: unknown[],
): Promise<R[]> {
  try {
    return (await db.query(sql, params)).rows as R[];
  } catch (err) {
    if (pgErrorCode(err) === PG_INVALID_REGEX) {
      throw new OperationOutcomeError(badRequest(`Invalid regular expression: ${(err as Error).message}`), err);
    }
    throw err;
  }
}

/**
 * One page of a value set definition's expansion (hl7.org/fhir/R4/valueset-operation-expand.html),
 * in one SQL statement. With filter text, exact and prefix display matches come first, then shorter
 * displays; without, the order of the compose (include by include, concepts in definition order).
 */
export async function expandDefinition(
  db: Queryable,
  scope: TerminologyScope,
  def: ValueSetDefinition,
  params: ExpandParams = {},
): Promise<ExpansionPage> {
  const offset = params.offset ?? 0;
  const text = params.filter?.trim() || undefined;
  const compiler = new ComposeCompiler(db, scope, { text, date: params.date });
  const members = await compiler.compile(def, true);
  const p = compiler.p;
  const where: string[] = [];
  if (params.activeOnly) {
    where.push('NOT m.inactive');
  }
  if (params.excludeNotForUI) {
    where.push('NOT m.abstract');
  }
  const memberParamCount = compiler.params.length;
  const order: string[] = [];
  if (text) {
    const lower = text.toLowerCase();
    order.push(`(lower(m.display) = ${p(lower)}) DESC`);
    order.push(`(lower(m.display) LIKE ${p(`${escapeLike(lower)}%`)}) DESC`);
    order.push('length(m.display)', 'lower(m.display)');
  }
  order.push('m.branch', 'm.seq', 'm.code');
  const limit = params.count ?? MAX_EXPANSION + 1;
  const sql = `SELECT m.system, m.version, m.code, m.display, m.abstract, m.inactive, m.designations,
      count(*) OVER () AS total
    FROM (${members}) m ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY ${order.join(', ')} LIMIT ${p(limit)} OFFSET ${p(offset)}`;
  const rows = await runTerminologyQuery<MemberRow>(db, sql, compiler.params);
  let total = rows.length > 0 ? Number(rows[0].total) : 0;
  if (rows.length === 0 && (offset > 0 || limit === 0)) {
    const counted = await runTerminologyQuery<{ n: number }>(
      db,
      `SELECT count(*)::int AS n FROM (${members}) m ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`,
      compiler.params.slice(0, memberParamCount),
    );
    total = counted[0]?.n ?? 0;
  }
  if (params.count === undefined && total > MAX_EXPANSION) {
    fail(
      tooCostly(
        `The value set has ${total} codes, more than the ${MAX_EXPANSION} one expansion returns; page with count and offset or narrow with filter`,
      ),
    );
  }
  return { total, offset, contains: rows.map((r) => toEntry(r, params.includeDesignations === true)) };
}

function toEntry(r: MemberRow, designations: boolean): ExpansionEntry {
  const entry: ExpansionEntry = { code: r.code };
  if (r.system) entry.system = r.system;
  if (r.version) entry.version = r.version;
  if (r.display !== null) entry.display = r.display;
  if (r.abstract) entry.abstract = true;
  if (r.inactive) entry.inactive = true;
  if (designations && r.designations?.length) entry.designation = r.designations as ExpansionEntry['designation'];
  return entry;
}

export interface MembershipResult {
  found: boolean;
  system?: string;
  code?: string;
  display?: string;
  inactive?: boolean;
  abstract?: boolean;
}

/** Whether a code (optionally of a given system) is a member of a value set definition. */
export async function findMember(
  db: Queryable,
  scope: TerminologyScope,
  def: ValueSetDefinition,
  code: string,
  system?: string,
): Promise<MembershipResult> {
  const compiler = new ComposeCompiler(db, scope);
  const members = await compiler.compile(def);
  const p = compiler.p;
  const conditions = [`m.code = ${p(code)}`];
  if (system) {
    conditions.push(`m.system = ${p(system)}`);
  }
  const rows = await runTerminologyQuery<MemberRow>(
    db,
    `SELECT m.system, m.code, m.display, m.abstract, m.inactive FROM (${members}) m
     WHERE ${conditions.join(' AND ')} LIMIT 1`,
    compiler.params,
  );
  const row = rows[0];
  if (!row) {
    return { found: false };
  }
  return {
    found: true,
    system: row.system ?? undefined,
    code: row.code,
    display: row.display ?? undefined,
    inactive: row.inactive,
    abstract: row.abstract,
  };
}
