import {
  badRequest,
  fail,
  unprocessable,
  type ValueSetCompose,
  type ValueSetComposeInclude,
  type ValueSetExpansion,
  type ValueSetExpansionContains,
} from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { filterSql, textFilterSql, type Param } from './filters.js';
import { findCodeSystem, findValueSet, splitCanonical, type CodeSystemRow, type TerminologyScope } from './resolve.js';

/** Nested value sets deeper than this are refused (and cycles long before). */
const MAX_NESTING = 12;

/**
 * Every member query yields these columns, so includes can be combined with UNION ALL:
 * system, version, code, display, abstract, inactive, designations, branch (include index), seq (order within).
 */
const EMPTY = `SELECT NULL::text AS system, NULL::text AS version, NULL::text AS code, NULL::text AS display,
  false AS abstract, false AS inactive, NULL::jsonb AS designations, 0 AS branch, 0::bigint AS seq WHERE false`;

export interface CompileOptions {
  /** $expand `filter` text, applied inside each include so the display index can be used. */
  text?: string;
  /** Business date for choosing value set and code system versions ($expand `date`). */
  date?: string;
}

/** The definition being expanded: a compose, or (for a value set that only has one) an expansion. */
export interface ValueSetDefinition {
  compose?: ValueSetCompose | null;
  expansion?: ValueSetExpansion | null;
}

/**
 * Compiles a value set definition into one SQL query over the terminology tables
 * (hl7.org/fhir/R4/valueset.html#compose): includes are unioned, excludes removed, `valueSet`
 * references intersected; nested value sets compile recursively into the same statement.
 */
export class ComposeCompiler {
  readonly params: unknown[] = [];
  private readonly codeSystems = new Map<string, CodeSystemRow | null>();
  private readonly path: string[] = [];

  /**
   * @param paramOffset placeholders start after this many parameters, so the SQL can be embedded
   *   in a caller's statement that already has some.
   */
  constructor(
    private readonly db: Queryable,
    private readonly scope: TerminologyScope,
    private readonly options: CompileOptions = {},
    private readonly paramOffset = 0,
  ) {}

  readonly p: Param = (value) => {
    this.params.push(value);
    return `$${this.paramOffset + this.params.length}`;
  };

  /** SQL yielding the members of a definition; `textFilter` applies the $expand filter text. */
  async compile(def: ValueSetDefinition, textFilter = false): Promise<string> {
    if (def.compose) {
      return this.compileCompose(def.compose, textFilter);
    }
    if (def.expansion?.contains) {
      return this.enumerated(flattenContains(def.expansion.contains), textFilter);
    }
    return EMPTY;
  }

  private async compileCompose(compose: ValueSetCompose, textFilter: boolean): Promise<string> {
    const includes = compose.include ?? [];
    if (!Array.isArray(includes) || includes.length === 0) {
      fail(badRequest('ValueSet.compose needs at least one include', 'ValueSet.compose.include'));
    }
    const branches: string[] = [];
    for (let i = 0; i < includes.length; i++) {
      let sql = await this.compileInclude(includes[i], i);
      if (textFilter && this.options.text) {
        sql = `SELECT * FROM (${sql}) m WHERE ${textFilterSql(this.options.text, this.p)}`;
      }
      branches.push(sql);
    }
    let members =
      branches.length === 1
        ? branches[0]
        : `SELECT DISTINCT ON (system, code) * FROM (${branches.join(' UNION ALL ')}) u ORDER BY system, code, branch, seq`;
    const excludes: string[] = [];
    for (const exclude of compose.exclude ?? []) {
      excludes.push(await this.compileInclude(exclude, 0));
    }
    const conditions: string[] = [];
    if (excludes.length > 0) {
      conditions.push(
        `NOT EXISTS (SELECT 1 FROM (${excludes.join(' UNION ALL ')}) x WHERE x.system = i.system AND x.code = i.code)`,
      );
    }
    if (compose.inactive === false) {
      conditions.push('NOT i.inactive');
    }
    if (conditions.length > 0) {
      members = `SELECT * FROM (${members}) i WHERE ${conditions.join(' AND ')}`;
    }
    return members;
  }

  private async compileInclude(include: ValueSetComposeInclude, branch: number): Promise<string> {
    const valueSets = include.valueSet ?? [];
    if (!include.system && valueSets.length === 0) {
      fail(badRequest('A compose include needs a system or a valueSet', 'ValueSet.compose.include'));
    }
    let base: string;
    const intersect = [...valueSets];
    if (include.system) {
      base = await this.compileSystemPart(include, branch);
    } else {
      const first = intersect.shift() as string;
      base = `SELECT system, version, code, display, abstract, inactive, designations, ${branch} AS branch, seq
        FROM (${await this.compileValueSetRef(first)}) v`;
    }
    if (intersect.length === 0) {
      return base;
    }
    const checks: string[] = [];
    for (const ref of intersect) {
      checks.push(
        `EXISTS (SELECT 1 FROM (${await this.compileValueSetRef(ref)}) w WHERE w.system = b.system AND w.code = b.code)`,
      );
    }
    return `SELECT * FROM (${base}) b WHERE ${checks.join(' AND ')}`;
  }

  /** include.system with its concepts or filters, or every concept of the system. */
  private async compileSystemPart(include: ValueSetComposeInclude, branch: number): Promise<string> {
    const system = include.system as string;
    const cs = await this.codeSystem(system, include.version);
    if (include.concept?.length) {
      if (include.filter?.length) {
        fail(badRequest('A compose include has either concepts or filters, not both', 'ValueSet.compose.include'));
      }
      const rows = include.concept.map((c) => ({ system, version: include.version, code: c.code, display: c.display }));
      return this.enumerated(rows, false, cs, branch);
    }
    if (!cs || (cs.conceptCount === 0 && cs.content === 'not-present')) {
      fail(
        unprocessable(
          `Cannot expand: the code system ${system}${include.version ? `|${include.version}` : ''} is not available on this server`,
          'ValueSet.compose.include.system',
        ),
      );
    }
    const where = [`c.code_system_id = ${this.p(cs.id)}`];
    for (const filter of include.filter ?? []) {
      where.push(filterSql(cs, filter, this.p));
    }
    return `SELECT ${this.p(cs.url)}::text AS system, ${this.p(cs.version)}::text AS version, c.code, c.display,
        c.abstract, c.inactive, c.designations, ${branch} AS branch, c.id AS seq
      FROM terminology_concept c WHERE ${where.join(' AND ')}`;
  }

  /**
   * Listed codes, in their listed order. When the code system is known, its concepts supply the
   * display and flags, and codes a complete code system does not define are left out
   * (R4 valueset.html#compose: the codes must be valid in the system).
   */
  private enumerated(
    rows: { system?: string; version?: string; code?: string; display?: string }[],
    textFilter: boolean,
    cs?: CodeSystemRow | null,
    branch = 0,
  ): string {
    const list = rows.filter((r) => typeof r.code === 'string' && r.code !== '');
    const arrays = [
      this.p(list.map((r) => r.system ?? null)),
      this.p(list.map((r) => r.version ?? null)),
      this.p(list.map((r) => r.code)),
      this.p(list.map((r) => r.display ?? null)),
    ];
    const v = `unnest(${arrays[0]}::text[], ${arrays[1]}::text[], ${arrays[2]}::text[], ${arrays[3]}::text[])
      WITH ORDINALITY AS v(system, version, code, display, ord)`;
    let sql: string;
    if (cs) {
      const on = cs.caseSensitive ? 'c.code = v.code' : 'lower(c.code) = lower(v.code)';
      // Only a complete code system can say a listed code does not exist.
      const join = cs.content === 'complete' || cs.content === null ? 'JOIN' : 'LEFT JOIN';
      sql = `SELECT v.system, COALESCE(v.version, ${this.p(cs.version)}::text) AS version, COALESCE(c.code, v.code) AS code,
          COALESCE(v.display, c.display) AS display, COALESCE(c.abstract, false) AS abstract,
          COALESCE(c.inactive, false) AS inactive, c.designations, ${branch} AS branch, v.ord AS seq
        FROM ${v} ${join} terminology_concept c ON c.code_system_id = ${this.p(cs.id)} AND ${on}`;
    } else {
      sql = `SELECT v.system, v.version, v.code, v.display, false AS abstract, false AS inactive,
          NULL::jsonb AS designations, ${branch} AS branch, v.ord AS seq FROM ${v}`;
    }
    if (textFilter && this.options.text) {
      sql = `SELECT * FROM (${sql}) m WHERE ${textFilterSql(this.options.text, this.p)}`;
    }
    return sql;
  }

  /** A nested value set by canonical url: its members, with cycle and depth checks. */
  private async compileValueSetRef(canonical: string): Promise<string> {
    const { url, version } = splitCanonical(canonical);
    const vs = await findValueSet(this.db, this.scope, url, { version, date: this.options.date });
    if (!vs) {
      fail(
        unprocessable(
          `Cannot expand: the value set ${canonical} is not available on this server`,
          'ValueSet.compose.include.valueSet',
        ),
      );
    }
    const key = String(vs.id);
    if (this.path.includes(key)) {
      fail(unprocessable(`Value set ${canonical} includes itself`, 'ValueSet.compose.include.valueSet'));
    }
    if (this.path.length >= MAX_NESTING) {
      fail(
        unprocessable(
          `Value sets are nested more than ${MAX_NESTING} deep at ${canonical}`,
          'ValueSet.compose.include.valueSet',
        ),
      );
    }
    this.path.push(key);
    try {
      return await this.compile(vs);
    } finally {
      this.path.pop();
    }
  }

  private async codeSystem(url: string, version?: string): Promise<CodeSystemRow | null> {
    const key = `${url}|${version ?? ''}`;
    if (!this.codeSystems.has(key)) {
      const found = await findCodeSystem(this.db, this.scope, url, { version, date: this.options.date });
      this.codeSystems.set(key, found ?? null);
    }
    return this.codeSystems.get(key) ?? null;
  }
}

/** An expansion's contains tree as a flat list (nested entries follow their parent). */
export function flattenContains(
  contains: ValueSetExpansionContains[],
  out: { system?: string; version?: string; code?: string; display?: string }[] = [],
  depth = 0,
): { system?: string; version?: string; code?: string; display?: string }[] {
  for (const c of contains) {
    if (c.code) {
      out.push({ system: c.system, version: c.version, code: c.code, display: c.display });
    }
    if (c.contains && depth < 50) {
      flattenContains(c.contains, out, depth + 1);
    }
  }
  return out;
}
