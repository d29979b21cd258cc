import { randomUUID } from 'node:crypto';
import { conflict, fail, type Resource } from '@hearth/core';
import { withTransaction, type Pool, type PoolClient } from '../platform/postgres.js';
import { applyUpdates, contentBundle } from './content.js';
import { anchorOf, contextItem, itemReferences, type ContextItem, type FhircastEvent } from './events.js';

/** The current context of a topic, as GET /fhircast/{topic} answers it. */
export interface CurrentContext {
  'context.type': string;
  'context.versionId'?: string;
  context: ContextItem[];
}

interface ContextRow {
  anchor_type: string;
  anchor_id: string;
  context: ContextItem[];
  content: Resource[];
  version_id: string;
}

/** How long an event too large for a notification is kept for the processes that deliver it. */
const EVENT_KEEP_SECONDS = 300;

/**
 * The hub's state in PostgreSQL, so that every process answers the same: the current context of
 * each topic (one anchor at a time: an open replaces it, the close of that anchor clears it) with
 * the shared content and versionId of a DiagnosticReport anchor.
 */
export class FhircastStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Applies a published event to its topic's context, under a lock of the topic's row, and returns
   * the event as subscribers receive it (an open carries the anchor's new `context.versionId`).
   * An update or select of a report that is not the open anchor, or an update from a stale
   * version, is a 409 saying so.
   */
  async apply(projectId: string, event: FhircastEvent): Promise<FhircastEvent> {
    const name = event.event['hub.event'];
    const topic = event.event['hub.topic'];
    const anchor = anchorOf(name);
    if (anchor?.action === 'open') {
      const resource = contextItem(event, anchor.key)?.resource as Resource;
      const versionId = randomUUID();
      await this.pool.query(
        `INSERT INTO fhircast_context (project_id, topic, anchor_type, anchor_id, context, content, version_id, updated_at)
         VALUES ($1, $2, $3, $4, $5, '[]', $6, now())
         ON CONFLICT (project_id, topic) DO UPDATE SET anchor_type = $3, anchor_id = $4, context = $5,
           content = '[]', version_id = $6, updated_at = now()`,
        [projectId, topic, anchor.type, resource.id, JSON.stringify(event.event.context), versionId],
      );
      return { ...event, event: { ...event.event, 'context.versionId': versionId } };
    }
    if (anchor?.action === 'close') {
      const resource = contextItem(event, anchor.key)?.resource as Resource;
      await this.pool.query(
        'DELETE FROM fhircast_context WHERE project_id = $1 AND topic = $2 AND anchor_type = $3 AND anchor_id = $4',
        [projectId, topic, anchor.type, resource.id],
      );
      return event;
    }
    // DiagnosticReport-update and -select act on the open report.
    return withTransaction(this.pool, async (client) => {
      const row = await this.lockedRow(client, projectId, topic);
      const report = itemReferences(contextItem(event, 'report') as ContextItem)[0];
      if (!row || `${row.anchor_type}/${row.anchor_id}` !== report) {
        fail(
          conflict(
            `${report} is not the open anchor context of this topic${row ? ` (${row.anchor_type}/${row.anchor_id} is)` : ''}: send DiagnosticReport-open first`,
            'conflict',
            'event.context.report',
          ),
        );
      }
      if (name !== 'DiagnosticReport-update') {
        return event;
      }
      const prior = event.event['context.priorVersionId'];
      if (prior !== row.version_id) {
        fail(
          conflict(
            `context.priorVersionId "${prior}" is not the current version of ${report} ("${row.version_id}"): get the current context and apply the updates since`,
            'conflict',
            'event.context.priorVersionId',
          ),
        );
      }
      const newVersion = event.event['context.versionId'] as string;
      const reportItem = contextItem(event, 'report');
      const updates = contextItem(event, 'updates')?.resource as Resource;
      // The report's attributes the update carries (its id and status at least) update the anchor.
      const withReport = reportItem?.resource
        ? applyUpdates([], row.context, {
            resourceType: 'Bundle',
            entry: [{ resource: reportItem.resource, request: { method: 'PUT' } }],
          } as Resource).context
        : row.context;
      const next = applyUpdates(row.content, withReport, updates);
      await client.query(
        `UPDATE fhircast_context SET context = $3, content = $4, version_id = $5, updated_at = now()
         WHERE project_id = $1 AND topic = $2`,
        [projectId, topic, JSON.stringify(next.context), JSON.stringify(next.content), newVersion],
      );
      return event;
    });
  }

  private async lockedRow(client: PoolClient, projectId: string, topic: string): Promise<ContextRow | undefined> {
    const { rows } = await client.query<ContextRow>(
      `SELECT anchor_type, anchor_id, context, content, version_id FROM fhircast_context
       WHERE project_id = $1 AND topic = $2 FOR UPDATE`,
      [projectId, topic],
    );
    return rows[0];
  }

  /** The topic's current context; an empty one (`context.type` "") when nothing is open. */
  async current(projectId: string, topic: string): Promise<CurrentContext> {
    const { rows } = await this.pool.query<ContextRow>(
      'SELECT anchor_type, anchor_id, context, content, version_id FROM fhircast_context WHERE project_id = $1 AND topic = $2',
      [projectId, topic],
    );
    const row = rows[0];
    if (!row) {
      return { 'context.type': '', context: [] };
    }
    const context = [...row.context];
    if (row.anchor_type === 'DiagnosticReport') {
      context.push({ key: 'content', resource: contentBundle(row.content) });
    }
    return { 'context.type': row.anchor_type, 'context.versionId': row.version_id, context };
  }

  /** Keeps an event too large for a notification; returns its row id. Old ones are dropped on the way. */
  async keepEvent(payload: unknown): Promise<string> {
    await this.pool.query(`DELETE FROM fhircast_event WHERE created_at < now() - make_interval(secs => $1)`, [
      EVENT_KEEP_SECONDS,
    ]);
    const { rows } = await this.pool.query<{ id: string }>(
      'INSERT INTO fhircast_event (payload) VALUES ($1) RETURNING id',
      [JSON.stringify(payload)],
    );
    return String(rows[0].id);
  }

  async readEvent(id: string): Promise<unknown> {
    const { rows } = await this.pool.query<{ payload: unknown }>('SELECT payload FROM fhircast_event WHERE id = $1', [
      id,
    ]);
    return rows[0]?.payload;
  }
}
