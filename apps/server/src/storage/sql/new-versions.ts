import type { StoredVersion } from '../types.js';
import { historyTable, resourceTable } from '../tables.js';

const COLUMNS = 'resource_type, id, project_id, version_id, last_updated, content';

/**
 * CTE parts that insert many brand-new resources (version 1) into their current and history
 * tables: one multi-row INSERT (through unnest) per table and type, so that a batch (automation
 * AuditEvents) is one statement with its index rows, whatever its size. As in newVersionParts, no
 * ON CONFLICT: an id that exists fails the whole statement. Compartments travel as JSON arrays (a
 * ragged text[][] cannot be unnested), as in writeVersions.
 */
export function newVersionsParts(versions: StoredVersion[], param: (value: unknown, cast: string) => string): string[] {
  const byType = new Map<string, StoredVersion[]>();
  for (const v of versions) {
    byType.set(v.resourceType, [...(byType.get(v.resourceType) ?? []), v]);
  }
  // Types in name order: a batch's statement text (a prepared shape) does not depend on entry order.
  return [...byType]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([resourceType, list], i) => {
      const column = (pick: (v: StoredVersion) => unknown, cast: string): string => param(list.map(pick), cast);
      const values = [
        column((v) => v.resourceType, 'text[]'),
        column((v) => v.id, 'text[]'),
        column((v) => v.projectId, 'uuid[]'),
        column((v) => v.versionId, 'int[]'),
        column((v) => v.lastUpdated.toISOString(), 'timestamptz[]'),
        column((v) => v.content, 'text[]'),
      ];
      const compartments = column((v) => JSON.stringify(v.compartments), 'text[]');
      return [
        `cur_${i} AS (INSERT INTO ${resourceTable(resourceType)} (${COLUMNS}, compartments)
        SELECT ${COLUMNS}, ARRAY(SELECT json_array_elements_text(c::json))
        FROM unnest(${values.join(', ')}, ${compartments}) AS v(${COLUMNS}, c))`,
        `hist_${i} AS (INSERT INTO ${historyTable(resourceType)} (${COLUMNS})
        SELECT ${COLUMNS} FROM unnest(${values.join(', ')}) AS v(${COLUMNS}))`,
      ];
    });
}
