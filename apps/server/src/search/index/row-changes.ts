import { KINDS, type IndexRow, type RowSet } from './rows.js';
import type { RowChanges } from './writer.js';

/** A row as stored: every column the writer writes (two rows with one key are identical rows). */
function rowKey(row: IndexRow): string {
  return JSON.stringify([row.code, row.grp, row.isMin ?? true, row.isMax ?? true, row.values]);
}

function countByKey(rows: IndexRow[]): Map<string, IndexRow[]> {
  const byKey = new Map<string, IndexRow[]>();
  for (const row of rows) {
    const key = rowKey(row);
    const same = byKey.get(key);
    if (same) same.push(row);
    else byKey.set(key, [row]);
  }
  return byKey;
}

/**
 * The index rows an update changes: per kind, the stored rows of the replaced version to delete
 * and the new version's rows to insert. A row kept as it is (same columns, as many copies) is in
 * neither list, so an update that changes a phone number rewrites that one token row, not the
 * resource's every string and token row (WAL per update: docs/performance.md).
 */
export function rowChanges(previous: RowSet, next: RowSet): RowChanges {
  const changes = {} as RowChanges;
  for (const kind of KINDS) {
    const before = countByKey(previous[kind]);
    const after = countByKey(next[kind]);
    const remove: IndexRow[] = [];
    const add: IndexRow[] = [];
    for (const [key, rows] of before) {
      // The delete matches a row on every column, so it removes all its copies: the new count is inserted.
      if (after.get(key)?.length !== rows.length) remove.push(rows[0]);
    }
    for (const [key, rows] of after) {
      if (before.get(key)?.length !== rows.length) add.push(...rows);
    }
    changes[kind] = { remove, add };
  }
  return changes;
}
