// The resource and history rows of a bulk write ($import), in the caller's transaction: the
// current rows of a batch's ids locked in one statement, new rows through COPY, replaced ones
// through one multi-row UPDATE.
import { copyRows } from '../../platform/postgres-copy.js';
import { preparedName, type PoolClient } from '../../platform/postgres.js';
import type { StoredVersion } from '../types.js';
import { historyTable, resourceTable } from '../tables.js';
import { toCurrentRow, type CurrentDbRow, type CurrentRow, type RowCondition } from './versions.js';

/** A current row as a bulk writer needs it: with whether the write condition allows replacing it. */
export interface LockedRow extends CurrentRow {
  allowed: boolean;
}

/**
 * The current rows of `ids` (one type), in whichever project holds them (the key is the type and
 * id alone, so an id another project holds must be known too), locked until the transaction
 * ends, with whether each meets `condition` (the access guard's write condition).
 */
export async function lockCurrentMany(
  client: PoolClient,
  resourceType: string,
  ids: string[],
  condition: RowCondition | undefined,
): Promise<Map<string, LockedRow>> {
  const params: unknown[] = [ids, resourceType];
  const allowed =
    condition?.('r', (value) => {
      params.push(value);
      return `$${params.length}`;
    }) ?? 'true';
  const text = `SELECT resource_type, id, project_id, version_id, last_updated, deleted, content, (${allowed}) AS allowed
    FROM ${resourceTable(resourceType)} r WHERE id = ANY($1::text[]) AND resource_type = $2 FOR UPDATE OF r`;
  const result = await client.query<CurrentDbRow & { allowed: boolean }>({
    name: preparedName('hearth_bulk_lock', text),
    text,
    values: params,
  });
  return new Map(result.rows.map((r) => [r.id, { ...toCurrentRow(r), allowed: r.allowed === true }]));
}

const HISTORY_COLUMNS = ['resource_type', 'id', 'project_id', 'version_id', 'last_updated', 'content'];

/**
 * Writes the versions of one type: COPY of the new resources' current rows, one UPDATE of the
 * replaced ones (each locked by lockCurrentMany, so each must be exactly the version before),
 * then every history row from the current rows.
 */
export async function writeVersionsByCopy(
  client: PoolClient,
  resourceType: string,
  created: StoredVersion[],
  replaced: StoredVersion[],
): Promise<void> {
  const updated = (v: StoredVersion) => v.lastUpdated.toISOString();
  await copyRows(
    client,
    resourceTable(resourceType),
    [...HISTORY_COLUMNS, 'compartments'],
    created.map((v) => [v.resourceType, v.id, v.projectId, v.versionId, updated(v), v.content, v.compartments]),
  );
  if (replaced.length > 0) {
    const text = `UPDATE ${resourceTable(resourceType)} r SET version_id = v.version_id, last_updated = v.last_updated,
        deleted = false, content = v.content, compartments = ARRAY(SELECT json_array_elements_text(v.c::json))
      FROM unnest($1::text[], $2::uuid[], $3::int[], $4::timestamptz[], $5::text[], $6::text[])
        AS v(id, project_id, version_id, last_updated, content, c)
      WHERE r.resource_type = $7 AND r.project_id = v.project_id AND r.id = v.id AND r.version_id = v.version_id - 1`;
    const result = await client.query({
      name: preparedName('hearth_bulk_update', text),
      text,
      values: [
        replaced.map((v) => v.id),
        replaced.map((v) => v.projectId),
        replaced.map((v) => v.versionId),
        replaced.map(updated),
        replaced.map((v) => v.content),
        replaced.map((v) => JSON.stringify(v.compartments)),
        resourceType,
      ],
    });
    if (result.rowCount !== replaced.length) {
      // The rows are locked: only a bug gets here, and the transaction must not commit.
      throw new Error(`Bulk update of ${resourceType}: ${result.rowCount} of ${replaced.length} rows updated`);
    }
  }
  // The history rows are the current rows just written: copied within the database rather than
  // sent a second time (the stored JSON is most of a batch's bytes).
  const columns = HISTORY_COLUMNS.join(', ');
  const text = `INSERT INTO ${historyTable(resourceType)} (${columns})
    SELECT ${columns} FROM ${resourceTable(resourceType)} WHERE resource_type = $1 AND id = ANY($2::text[])`;
  const history = await client.query({
    name: preparedName('hearth_bulk_history', text),
    text,
    values: [resourceType, [...created, ...replaced].map((v) => v.id)],
  });
  if (history.rowCount !== created.length + replaced.length) {
    throw new Error(`Bulk history of ${resourceType}: ${history.rowCount} of ${created.length + replaced.length} rows`);
  }
}
