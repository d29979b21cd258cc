import type { Migration } from './types.js';

/**
 * The FHIRcast hub (fhircast/): the current context of each topic, shared by every process (the
 * versionId of a DiagnosticReport anchor is checked under a row lock), and events too large for a
 * PostgreSQL notification, kept a few minutes for the processes that deliver them.
 */
export const m0720Fhircast: Migration = {
  id: 720,
  name: 'fhircast: current context per topic, large events in transit',
  async up(client) {
    await client.query(`
      CREATE TABLE fhircast_context (
        project_id uuid NOT NULL,
        topic text NOT NULL,
        anchor_type text NOT NULL,
        anchor_id text NOT NULL,
        context jsonb NOT NULL,
        content jsonb NOT NULL,
        version_id text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, topic)
      )`);
    await client.query(`
      CREATE TABLE fhircast_event (
        id bigserial PRIMARY KEY,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await client.query('CREATE INDEX fhircast_event_created_at ON fhircast_event (created_at)');
  },
};
