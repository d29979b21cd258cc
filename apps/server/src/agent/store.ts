// The agent hub's rows (migration 0310): connections by agent, messages already delivered to a
// bot (so a redelivery is answered without running it again), and the recent-message log.
import type { Pool } from '../platform/postgres.js';

/** A heartbeat older than this means the agent (or the process holding it) is gone. */
export const STALE_AFTER_MS = 60_000;

export interface AgentConnectionStatus {
  status: 'connected' | 'disconnected';
  version?: string;
  lastUpdated?: string;
  /** The process holding the socket, while connected. */
  processId?: string;
}

export interface LoggedMessage {
  agentId: string;
  projectId: string;
  channel: string;
  direction: 'in' | 'out';
  remote: string;
  contentType: string;
  body: string;
  response?: string;
  statusCode: number;
}

/** Bodies in the log are cut to this many characters (the log is for a glance, not an archive). */
const LOG_BODY_CHARS = 4000;
/** Messages kept per agent and channel. */
export const LOG_PER_CHANNEL = 20;

export class AgentStore {
  constructor(private readonly pool: Pool) {}

  async connected(agentId: string, projectId: string, processId: string, version: string | undefined): Promise<void> {
    await this.pool.query(
      `INSERT INTO agent_connection (agent_id, project_id, process_id, version, connected, connected_at, last_heartbeat)
       VALUES ($1, $2, $3, $4, true, now(), now())
       ON CONFLICT (agent_id) DO UPDATE SET project_id = $2, process_id = $3, version = $4, connected = true,
         connected_at = now(), last_heartbeat = now()`,
      [agentId, projectId, processId, version ?? null],
    );
  }

  async heartbeat(agentId: string, processId: string): Promise<void> {
    await this.pool.query(
      'UPDATE agent_connection SET last_heartbeat = now() WHERE agent_id = $1 AND process_id = $2',
      [agentId, processId],
    );
  }

  /** Only this process's own row: the agent may already have connected again elsewhere. */
  async disconnected(agentId: string, processId: string): Promise<void> {
    await this.pool.query(
      'UPDATE agent_connection SET connected = false, last_heartbeat = now() WHERE agent_id = $1 AND process_id = $2',
      [agentId, processId],
    );
  }

  async statuses(agentIds: string[]): Promise<Map<string, AgentConnectionStatus>> {
    const { rows } = await this.pool.query<{
      agent_id: string;
      process_id: string;
      version: string | null;
      connected: boolean;
      last_heartbeat: Date;
      fresh: boolean;
    }>(
      `SELECT agent_id, process_id, version, connected, last_heartbeat,
              last_heartbeat > now() - make_interval(secs => $2::double precision / 1000) AS fresh
       FROM agent_connection WHERE agent_id = ANY($1)`,
      [agentIds, STALE_AFTER_MS],
    );
    const out = new Map<string, AgentConnectionStatus>();
    for (const row of rows) {
      const up = row.connected && row.fresh;
      out.set(row.agent_id, {
        status: up ? 'connected' : 'disconnected',
        ...(row.version ? { version: row.version } : {}),
        lastUpdated: row.last_heartbeat.toISOString(),
        ...(up ? { processId: row.process_id } : {}),
      });
    }
    return out;
  }

  /** The answer given when this message went through its bot before, if it did. */
  async delivered(agentId: string, key: string): Promise<{ contentType: string; response: string } | undefined> {
    const { rows } = await this.pool.query<{ content_type: string; response: string | null }>(
      'SELECT content_type, response FROM agent_delivery WHERE agent_id = $1 AND message_key = $2',
      [agentId, key],
    );
    return rows[0] ? { contentType: rows[0].content_type, response: rows[0].response ?? '' } : undefined;
  }

  async recordDelivery(agentId: string, key: string, contentType: string, response: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO agent_delivery (agent_id, message_key, content_type, response) VALUES ($1, $2, $3, $4)
       ON CONFLICT (agent_id, message_key) DO NOTHING`,
      [agentId, key, contentType, response],
    );
  }

  /** Forgets deliveries older than the window in which an agent could still send them again. */
  async pruneDeliveries(olderThanMs: number): Promise<void> {
    await this.pool.query(
      'DELETE FROM agent_delivery WHERE delivered_at < now() - make_interval(secs => $1::double precision / 1000)',
      [olderThanMs],
    );
  }

  /** Appends messages to the log and trims each channel touched to its last LOG_PER_CHANNEL. */
  async log(messages: LoggedMessage[]): Promise<void> {
    if (messages.length === 0) {
      return;
    }
    const cut = (text: string | undefined) => (text === undefined ? null : text.slice(0, LOG_BODY_CHARS));
    await this.pool.query(
      `INSERT INTO agent_message_log (agent_id, project_id, channel, direction, remote, content_type, body, response, status_code)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[])`,
      [
        messages.map((m) => m.agentId),
        messages.map((m) => m.projectId),
        messages.map((m) => m.channel),
        messages.map((m) => m.direction),
        messages.map((m) => m.remote),
        messages.map((m) => m.contentType),
        messages.map((m) => cut(m.body)),
        messages.map((m) => cut(m.response)),
        messages.map((m) => m.statusCode),
      ],
    );
    const channels = [...new Set(messages.map((m) => `${m.agentId}\u0000${m.channel}`))].map((k) => k.split('\u0000'));
    await this.pool.query(
      `DELETE FROM agent_message_log l USING unnest($1::text[], $2::text[]) AS c(agent_id, channel)
       WHERE l.agent_id = c.agent_id AND l.channel = c.channel AND l.id < (
         SELECT id FROM agent_message_log k WHERE k.agent_id = c.agent_id AND k.channel = c.channel
         ORDER BY id DESC OFFSET $3 - 1 LIMIT 1)`,
      [channels.map((c) => c[0]), channels.map((c) => c[1]), LOG_PER_CHANNEL],
    );
  }

  /** The log of an agent (of one channel when given), newest first. */
  async recent(agentId: string, channel?: string): Promise<(LoggedMessage & { id: string; at: string })[]> {
    const { rows } = await this.pool.query<{
      id: string;
      project_id: string;
      channel: string;
      direction: 'in' | 'out';
      remote: string;
      content_type: string;
      body: string;
      response: string | null;
      status_code: number;
      at: Date;
    }>(
      `SELECT id::text AS id, project_id, channel, direction, remote, content_type, body, response, status_code, at
       FROM agent_message_log WHERE agent_id = $1 AND ($2::text IS NULL OR channel = $2)
       ORDER BY id DESC LIMIT 500`,
      [agentId, channel ?? null],
    );
    return rows.map((r) => ({
      id: r.id,
      agentId,
      projectId: r.project_id,
      channel: r.channel,
      direction: r.direction,
      remote: r.remote,
      contentType: r.content_type,
      body: r.body,
      ...(r.response !== null ? { response: r.response } : {}),
      statusCode: r.status_code,
      at: r.at.toISOString(),
    }));
  }
}
