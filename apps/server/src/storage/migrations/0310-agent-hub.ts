import type { Migration } from './types.js';

/**
 * The agent hub (agent/): which process holds each agent's websocket and when it last beat, so
 * `$status` answers the same on every process; the inbound messages already run through their bot
 * (agent_delivery), so a message the agent sends again after a lost acknowledgement is answered
 * from here instead of running the bot twice; and a short log of recent messages per channel for
 * the app's Agent page (kept bounded by the hub).
 */
export const m0310AgentHub: Migration = {
  id: 310,
  name: 'agent: connections, delivered messages, recent message log',
  async up(client) {
    await client.query(`
      CREATE TABLE agent_connection (
        agent_id text PRIMARY KEY,
        project_id uuid NOT NULL,
        process_id uuid NOT NULL,
        version text,
        connected boolean NOT NULL,
        connected_at timestamptz NOT NULL,
        last_heartbeat timestamptz NOT NULL
      )`);
    await client.query(`
      CREATE TABLE agent_delivery (
        agent_id text NOT NULL,
        message_key text NOT NULL,
        content_type text NOT NULL,
        response text,
        delivered_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, message_key)
      )`);
    await client.query('CREATE INDEX agent_delivery_delivered_at ON agent_delivery (delivered_at)');
    await client.query(`
      CREATE TABLE agent_message_log (
        id bigserial PRIMARY KEY,
        agent_id text NOT NULL,
        project_id uuid NOT NULL,
        channel text NOT NULL,
        direction text NOT NULL,
        remote text NOT NULL,
        content_type text NOT NULL,
        body text NOT NULL,
        response text,
        status_code integer NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
      )`);
    await client.query('CREATE INDEX agent_message_log_recent ON agent_message_log (agent_id, channel, id DESC)');
  },
};
