import type { Migration } from './types.js';

/**
 * One row per running server process whose subscription listener runs (subscriptions/heartbeat.ts):
 * a process that stops beating died, and the changes it may not have queued yet are evaluated again
 * by another process. pending_since is the process's oldest committed change not yet queued.
 */
export const m0301ListenerHeartbeat: Migration = {
  id: 301,
  name: 'subscriptions: listener heartbeats for crash recovery',
  async up(client) {
    await client.query(`
      CREATE TABLE subscription_listener_heartbeat (
        process_id uuid PRIMARY KEY,
        started_at timestamptz NOT NULL,
        beat_at timestamptz NOT NULL,
        pending_since timestamptz
      )`);
  },
};
