import type { Migration } from './types.js';

/**
 * Who holds a live subscription websocket, per server process (subscriptions/presence.ts): a row
 * per process, project and profile (the bound subscription's author), refreshed while the socket
 * answers pings and deleted when its last socket closes. Messaging (messaging/notify.ts) reads it
 * to email only recipients who are not connected; rows of a dead process age out.
 */
export const m0302WebsocketPresence: Migration = {
  id: 302,
  name: 'subscriptions: websocket presence per profile',
  async up(client) {
    await client.query(`
      CREATE TABLE websocket_presence (
        process_id uuid NOT NULL,
        project_id uuid NOT NULL,
        profile text NOT NULL,
        seen_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, profile, process_id)
      )`);
    await client.query('CREATE INDEX websocket_presence_process ON websocket_presence (process_id)');
  },
};
