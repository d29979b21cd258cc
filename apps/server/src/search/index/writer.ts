import { createHash } from 'node:crypto';
import type { PoolClient } from '../../platform/postgres.js';
import { KINDS, TABLES, type IndexRow, type Kind, type RowSet } from './rows.js';

/** The index rows of one resource version, and whether rows of an earlier version may exist. */
export interface IndexEntry {
  resourceType: string;
  id: string;
  projectId: string;
  rows?: RowSet;
  /** False for a resource created just now: there is nothing to delete first. */
  replace: boolean;
  /**
   * With replace: the rows to delete and to insert, per kind (index/row-changes.ts); the stored
   * rows of the replaced version that are not in `remove` are kept as they are.
   * Undefined: every row is replaced (and the rows of contained resources with them).
   */
  changes?: RowChanges;
}

/** What an update changes in a resource's index rows, per kind. */
export type RowChanges = Record<Kind, { remove: IndexRow[]; add: IndexRow[] }>;

/**
 * Writes the index rows of a batch in ONE statement: a DELETE of the replaced resources' rows and
 * one multi-row INSERT (through unnest) per table, as data-modifying CTEs. All parts see the
 * snapshot from before the statement, so the DELETE never removes the rows inserted beside it.
 * A 150-entry transaction costs one round trip here, not hundreds.
 */
export async function writeIndexRows(client: PoolClient, entries: IndexEntry[]): Promise<void> {
  const params: unknown[] = [];
  const parts = indexRowParts(entries, (value, cast) => {
    params.push(value);
    return `$${params.length}::${cast}`;
  });
  if (parts.length === 0) return;
  const text = `WITH ${parts.join(',\n')} SELECT 1`;
  // Named, so each connection plans a shape once: planning this many CTEs cost more than running
  // them (15 ms against 1.3 ms for one updated Patient). Shapes are few: which kinds have rows.
  await client.query({ name: statementName(text), text, values: params });
}

/**
 * The data-modifying CTEs of writeIndexRows, with their values bound through `p` (which returns
 * the placeholder), so that another statement can carry them too (a create writes its resource
 * rows and index rows in one).
 */
export function indexRowParts(
  entries: IndexEntry[],
  p: (value: unknown, cast: string) => string,
  guard?: string,
): string[] {
  // With a guard (a SQL condition, e.g. that the statement's own update of the resource row
  // happened), every part writes only when it holds.
  const onlyIf = guard ? ` AND ${guard}` : '';
  const parts: string[] = [];
  const replaced = entries.filter((e) => e.replace);
  const column = (list: IndexEntry[], pick: (e: IndexEntry) => string, cast: string) => p(list.map(pick), cast);
  for (const kind of KINDS) {
    const table = TABLES[kind].table;
    const list = replaced.filter((e) => !e.changes);
    if (list.length === 1) {
      // One resource: scalar values, so the generic plan PostgreSQL settles on for this
      // prepared shape is the (resource_id, code) index too; with arrays it guessed ten rows and
      // chose a hash join over the whole table (10 ms), so it replanned every time instead (0.3 ms).
      const [e] = list;
      parts.push(`del_${kind} AS (DELETE FROM ${table} t
        WHERE t.resource_id = ${p(e.id, 'text')} AND t.resource_type || '' = ${p(e.resourceType, 'text')} AND t.project_id = ${p(e.projectId, 'uuid')}${onlyIf})`);
    } else if (list.length > 0) {
      // `resource_type || ''` keeps the planner on the (resource_id, code) index: with a bare
      // resource_type test it may AND in the (resource_type, code, ...) index, which reads every
      // row of the type (measured: 25 ms instead of 0.3 ms per updated Patient, 13 ms of DB CPU).
      parts.push(`del_${kind} AS (DELETE FROM ${table} t USING unnest(${column(list, (e) => e.resourceType, 'text[]')}, ${column(list, (e) => e.id, 'text[]')}, ${column(list, (e) => e.projectId, 'uuid[]')}) AS d(resource_type, id, project_id)
        WHERE t.resource_id = d.id AND t.resource_type || '' = d.resource_type AND t.project_id = d.project_id${onlyIf})`);
    }
    const changed = replaced.filter((e) => e.changes && e.changes[kind].remove.length > 0);
    if (changed.length > 0) {
      parts.push(removedRowsPart(kind, changed, p, onlyIf));
    }
    const whole = replaced.filter((e) => !e.changes);
    if (whole.length > 0) {
      // The rows of the resources it contained.
      parts.push(`delc_${kind} AS (DELETE FROM ${table} t USING unnest(${column(whole, (e) => e.id, 'text[]')}, ${column(whole, (e) => e.projectId, 'uuid[]')}) AS d(id, project_id)
        WHERE t.owner_id = d.id AND t.project_id = d.project_id${onlyIf})`);
    }
  }
  // Contained resources are written as resources of their own, owned by their container.
  const all: (IndexEntry & { ownerId?: string })[] = [];
  for (const e of entries) {
    all.push(e);
    for (const c of e.rows?.contained ?? []) {
      all.push({
        resourceType: c.resourceType,
        id: `${e.id}#${c.id}`,
        projectId: e.projectId,
        rows: c.rows,
        replace: false,
        ownerId: e.id,
      });
    }
  }
  for (const kind of KINDS) {
    const spec = TABLES[kind];
    const cols = {
      type: [] as string[],
      id: [] as string[],
      project: [] as string[],
      code: [] as string[],
      grp: [] as number[],
      isMin: [] as boolean[],
      isMax: [] as boolean[],
      owner: [] as (string | null)[],
      values: spec.columns.map(() => [] as (string | null)[]),
    };
    for (const e of all) {
      // An update inserts only its new rows; the stored rows it keeps stay as they are.
      for (const row of e.changes ? e.changes[kind].add : (e.rows?.[kind] ?? [])) {
        cols.type.push(e.resourceType);
        cols.id.push(e.id);
        cols.project.push(e.projectId);
        cols.code.push(row.code);
        cols.grp.push(row.grp);
        cols.isMin.push(row.isMin ?? true);
        cols.isMax.push(row.isMax ?? true);
        cols.owner.push(e.ownerId ?? null);
        row.values.forEach((v, i) => cols.values[i].push(v));
      }
    }
    if (cols.type.length === 0) continue;
    const columnNames = [
      'resource_type',
      'resource_id',
      'project_id',
      'code',
      'grp',
      'is_min',
      'is_max',
      'owner_id',
      ...spec.columns.map((c) => c[0]),
    ];
    const arrays = [
      p(cols.type, 'text[]'),
      p(cols.id, 'text[]'),
      p(cols.project, 'uuid[]'),
      p(cols.code, 'text[]'),
      p(cols.grp, 'int2[]'),
      p(cols.isMin, 'bool[]'),
      p(cols.isMax, 'bool[]'),
      p(cols.owner, 'text[]'),
      ...spec.columns.map((c, i) => p(cols.values[i], c[1])),
    ];
    parts.push(
      `ins_${kind} AS (INSERT INTO ${spec.table} (${columnNames.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')})${guard ? ` WHERE ${guard}` : ''})`,
    );
    if (kind === 'string') {
      // The string values not seen before join the trigram-indexed list of values (migration 104).
      parts.push(`txt_string AS (${newStringTextsSql(arrays[columnNames.indexOf('value')], onlyIf)})`);
    }
  }
  return parts;
}

/**
 * The INSERT that adds the values of `values` (an SQL text[] expression) not yet in
 * search_string_text (migration 104), for the writes here and in copy-writer.ts. The lookup is a
 * range with equal bounds (the same as `=` under the column's C collation), which only the btree
 * on value can serve: pg_trgm's GIN index also answers `=`, and on a table without statistics (a
 * new database, autovacuum off) the planner chose it, whose every probe reads the whole GIN
 * pending list: 92 ms and 8,600 buffers per Patient create, measured with auto_explain.
 */
export function newStringTextsSql(values: string, onlyIf = ''): string {
  return `INSERT INTO search_string_text (value)
        SELECT DISTINCT v.value FROM unnest(${values}) AS v(value)
        WHERE NOT EXISTS (SELECT 1 FROM search_string_text s WHERE s.value >= v.value AND s.value <= v.value)${onlyIf}`;
}

/**
 * Deletes the stored rows an update no longer has, each matched on every column (the rows of one
 * value are identical, so all copies of a row go and the update inserts its new count of them).
 * The id stays a scalar for one resource (see indexRowParts: the (resource_id, code) index).
 */
function removedRowsPart(
  kind: Kind,
  entries: IndexEntry[],
  p: (value: unknown, cast: string) => string,
  onlyIf: string,
): string {
  const spec = TABLES[kind];
  const rows = entries.flatMap((e) => e.changes![kind].remove.map((row) => ({ e, row })));
  const arrays = [
    `${p(
      rows.map((r) => r.row.code),
      'text[]',
    )}`,
    `${p(
      rows.map((r) => r.row.grp),
      'int2[]',
    )}`,
    `${p(
      rows.map((r) => r.row.isMin ?? true),
      'bool[]',
    )}`,
    `${p(
      rows.map((r) => r.row.isMax ?? true),
      'bool[]',
    )}`,
    ...spec.columns.map((c, i) =>
      p(
        rows.map((r) => r.row.values[i]),
        c[1],
      ),
    ),
  ];
  const names = ['code', 'grp', 'is_min', 'is_max', ...spec.columns.map((_, i) => `v${i}`)];
  let owner: string;
  if (entries.length === 1) {
    const [e] = entries;
    owner = `t.resource_id = ${p(e.id, 'text')} AND t.resource_type || '' = ${p(e.resourceType, 'text')} AND t.project_id = ${p(e.projectId, 'uuid')}`;
  } else {
    arrays.push(
      p(
        rows.map((r) => r.e.id),
        'text[]',
      ),
      p(
        rows.map((r) => r.e.resourceType),
        'text[]',
      ),
      p(
        rows.map((r) => r.e.projectId),
        'uuid[]',
      ),
    );
    names.push('id', 'resource_type', 'project_id');
    owner = `t.resource_id = d.id AND t.resource_type || '' = d.resource_type AND t.project_id = d.project_id`;
  }
  const same = spec.columns.map((c, i) => `t.${c[0]} IS NOT DISTINCT FROM d.v${i}`).join(' AND ');
  return `rm_${kind} AS (DELETE FROM ${spec.table} t USING unnest(${arrays.join(', ')}) AS d(${names.join(', ')})
        WHERE ${owner} AND t.code = d.code AND t.grp = d.grp AND t.is_min = d.is_min AND t.is_max = d.is_max AND ${same}${onlyIf})`;
}

const statementNames = new Map<string, string>();

/** A prepared-statement name for a statement text (a short hash; the map keeps it cheap to find). */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `hearth_index_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    if (statementNames.size < 1000) statementNames.set(text, name);
  }
  return name;
}
