import type { Queryable } from '../platform/postgres.js';
import type { ActiveSubscriptions } from './active.js';
import { isAutomationAudit, type CommittedChange } from './listener.js';

/** History rows read (and queued) at a time. */
const PAGE_SIZE = 500;

/** A span of commit times whose changes a dead process may have heard but not queued. */
export interface RecoveryWindow {
  from: Date;
  to: Date;
}

interface HistoryRow {
  resource_type: string;
  id: string;
  version_id: number;
  last_updated: Date;
  deleted: boolean;
  content: string;
  previous_deleted: boolean | null;
  previous_content: string | null;
}

function parseAudit(content: string | null): unknown {
  try {
    return content ? JSON.parse(content) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The change a history row records, as the write listener heard it: version 1 or a version after a
 * deletion is a create, a deleted version a delete, anything else an update of the version before.
 */
function toChange(projectId: string, row: HistoryRow): CommittedChange {
  const previousLive = row.previous_deleted === false;
  const interaction = row.deleted ? 'delete' : previousLive ? 'update' : 'create';
  const written = row.deleted
    ? parseAudit(row.previous_content)
    : row.resource_type === 'AuditEvent'
      ? parseAudit(row.content)
      : undefined;
  return {
    interaction,
    projectId,
    resourceType: row.resource_type,
    id: row.id,
    versionId: row.version_id,
    ...(previousLive ? { previousVersionId: row.version_id - 1 } : {}),
    lastUpdated: row.last_updated,
    content: row.deleted ? '' : row.content,
    automationAudit: isAutomationAudit(row.resource_type, written),
  };
}

/**
 * Reads back, page by page, every version written in the window in the projects with active
 * subscriptions, on the types they watch (resource_history's (project_id, last_updated) index),
 * and hands each page to `queue` (the listener's one path to evaluation jobs).
 */
export async function recoverWindow(
  db: Queryable,
  active: Pick<ActiveSubscriptions, 'types'>,
  window: RecoveryWindow,
  queue: (changes: CommittedChange[]) => Promise<void>,
): Promise<number> {
  const projects = await db.query<{ project_id: string }>(
    `SELECT DISTINCT project_id FROM "Subscription" WHERE NOT deleted`,
  );
  let recovered = 0;
  for (const { project_id: projectId } of projects.rows) {
    const types = await active.types(projectId);
    if (types.length === 0) {
      continue;
    }
    let after: [Date, string, string, number] | undefined;
    for (;;) {
      const page = await db.query<HistoryRow>(
        `SELECT h.resource_type, h.id, h.version_id, h.last_updated, h.deleted, h.content,
                p.deleted AS previous_deleted,
                CASE WHEN h.deleted AND h.resource_type = 'AuditEvent' THEN p.content END AS previous_content
           FROM resource_history h
           LEFT JOIN resource_history p
             ON p.resource_type = h.resource_type AND p.project_id = h.project_id AND p.id = h.id
            AND p.version_id = h.version_id - 1
          WHERE h.project_id = $1::uuid AND h.last_updated >= $2 AND h.last_updated <= $3
            AND h.resource_type = ANY($4::text[])
            AND ($5::timestamptz IS NULL
                 OR (h.last_updated, h.resource_type, h.id, h.version_id) > ($5, $6::text, $7::text, $8::int))
          ORDER BY h.last_updated, h.resource_type, h.id, h.version_id
          LIMIT ${PAGE_SIZE}`,
        [
          projectId,
          window.from,
          window.to,
          types,
          after?.[0] ?? null,
          after?.[1] ?? null,
          after?.[2] ?? null,
          after?.[3] ?? null,
        ],
      );
      if (page.rows.length > 0) {
        await queue(page.rows.map((row) => toChange(projectId, row)));
        recovered += page.rows.length;
        const last = page.rows[page.rows.length - 1];
        after = [last.last_updated, last.resource_type, last.id, last.version_id];
      }
      if (page.rows.length < PAGE_SIZE) {
        break;
      }
    }
  }
  return recovered;
}
