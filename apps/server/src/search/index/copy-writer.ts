// Index rows of a bulk write (import) through COPY: the same rows writeIndexRows writes, without
// the statement's array parameters, which cost more to build, send and unnest than the rows do.
import { copyRows, type CopyValue } from '../../platform/postgres-copy.js';
import type { PoolClient } from '../../platform/postgres.js';
import { KINDS, TABLES } from './rows.js';
import { newStringTextsSql, writeIndexRows, type IndexEntry } from './writer.js';

const COMMON_COLUMNS = ['resource_type', 'resource_id', 'project_id', 'code', 'grp', 'is_min', 'is_max', 'owner_id'];

/** The distinct string values not yet in search_string_text join it, as writeIndexRows adds them. */
const NEW_STRING_TEXTS = newStringTextsSql('$1::text[]');

/**
 * Writes every index row of `entries` in the caller's transaction: first deletes the stored rows
 * of the entries that replace an earlier version (theirs and their contained resources'), then
 * one COPY per table. Contained resources are written as resources of their own, owned by their
 * container, as in indexRowParts.
 */
export async function copyIndexRows(client: PoolClient, entries: IndexEntry[]): Promise<void> {
  const replaced = entries.filter((e) => e.replace);
  if (replaced.length > 0) {
    // Rows undefined: only the deletions of every kind (and of the contained resources' rows).
    await writeIndexRows(
      client,
      replaced.map((e) => ({ ...e, rows: undefined, changes: undefined })),
    );
  }
  const rows = new Map(KINDS.map((kind) => [kind, [] as CopyValue[][]]));
  const add = (e: IndexEntry, ownerId: string | null) => {
    for (const kind of KINDS) {
      const list = rows.get(kind) as CopyValue[][];
      for (const row of e.rows?.[kind] ?? []) {
        list.push([
          e.resourceType,
          e.id,
          e.projectId,
          row.code,
          row.grp,
          row.isMin === false ? 'f' : 't',
          row.isMax === false ? 'f' : 't',
          ownerId,
          ...row.values,
        ]);
      }
    }
  };
  for (const e of entries) {
    add(e, null);
    for (const c of e.rows?.contained ?? []) {
      add(
        { resourceType: c.resourceType, id: `${e.id}#${c.id}`, projectId: e.projectId, rows: c.rows, replace: false },
        e.id,
      );
    }
  }
  for (const kind of KINDS) {
    const spec = TABLES[kind];
    const list = rows.get(kind) as CopyValue[][];
    await copyRows(client, spec.table, [...COMMON_COLUMNS, ...spec.columns.map((c) => c[0])], list);
    if (kind === 'string' && list.length > 0) {
      const values = [...new Set(list.map((r) => r[COMMON_COLUMNS.length] as string))];
      await client.query(NEW_STRING_TEXTS, [values]);
    }
  }
}
