import { getR4ResourceTypes } from '@hearth/definitions';
import type { Migration } from './types.js';
import { historyTable, resourceTable } from '../tables.js';

/**
 * Current and history tables, LIST-partitioned by resource type: each type has its own physical
 * table pair ("Patient", "Patient_History") while the code works against two logical tables.
 * See docs/adr/0001-storage-layout.md.
 */
/**
 * The platform types as they stood when this migration was written. Frozen: a migration must do
 * the same thing forever, so a type added later gets its partitions from a new migration.
 */
const PLATFORM_TYPES_AT_0001 = [
  'Project',
  'ClientApplication',
  'User',
  'ProjectMembership',
  'Bot',
  'Login',
  'PasswordChangeRequest',
  'UserSecurityRequest',
  'JsonWebKey',
  'AccessPolicy',
  'UserConfiguration',
  'BulkDataExport',
  'SmartAppLaunch',
  'DomainConfiguration',
  'IdentityProvider',
  'AsyncJob',
  'Agent',
];

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
    // R4 (4.0.1) is a frozen specification, so its type list never changes.
    for (const type of [...getR4ResourceTypes(), ...PLATFORM_TYPES_AT_0001].sort()) {
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
