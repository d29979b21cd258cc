import { getAllResourceTypes } from '@hearth/definitions';
import type { Migration } from './index.js';
import { historyTable, resourceTable } from '../tables.js';

/**
 * Current and history tables, LIST-partitioned by resource type: each type has its own physical
 * table pair ("Patient", "Patient_History") while the code works against two logical tables.
 * See docs/adr/0001-storage-layout.md.
 */
export const m0001CoreStorage: Migration = {
  id: 1,
  name: 'core storage: resource and history tables partitioned by type',
  async up(client) {
    await client.query(`
      CREATE TABLE resource (
        resource_type text NOT NULL,
        id text NOT NULL,
        project_id uuid NOT NULL,
        version_id integer NOT NULL,
        last_updated timestamptz NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        content text NOT NULL,
        compartments text[] NOT NULL DEFAULT '{}',
        PRIMARY KEY (resource_type, project_id, id)
      ) PARTITION BY LIST (resource_type)`);
    await client.query(`
      CREATE TABLE resource_history (
        resource_type text NOT NULL,
        id text NOT NULL,
        project_id uuid NOT NULL,
        version_id integer NOT NULL,
        last_updated timestamptz NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        content text NOT NULL,
        PRIMARY KEY (resource_type, project_id, id, version_id)
      ) PARTITION BY LIST (resource_type)`);
    for (const type of getAllResourceTypes()) {
      await client.query(`CREATE TABLE ${resourceTable(type)} PARTITION OF resource FOR VALUES IN ('${type}')`);
      await client.query(`CREATE TABLE ${historyTable(type)} PARTITION OF resource_history FOR VALUES IN ('${type}')`);
    }
    await client.query(
      'CREATE INDEX resource_last_updated_idx ON resource (resource_type, project_id, last_updated, id)',
    );
    await client.query('CREATE INDEX resource_id_idx ON resource (resource_type, id)');
    await client.query('CREATE INDEX resource_compartments_idx ON resource USING gin (compartments)');
    await client.query(
      'CREATE INDEX resource_history_updated_idx ON resource_history (resource_type, project_id, last_updated, id, version_id)',
    );
    await client.query(
      'CREATE INDEX resource_history_project_updated_idx ON resource_history (project_id, last_updated)',
    );
    // Server-wide settings written once (e.g. the super admin project's id).
    await client.query('CREATE TABLE hearth_setting (key text PRIMARY KEY, value text NOT NULL)');
  },
};
