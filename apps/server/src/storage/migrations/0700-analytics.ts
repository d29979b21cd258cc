import type { Migration } from './types.js';

/**
 * SQL on FHIR (analytics/): the ViewDefinition resource type's partitions (a platform type added
 * after 0001), and the register of materialised views: which view of which project is kept in
 * which table of the project's reporting schema, with the definition the table was built from.
 */
export const m0700Analytics: Migration = {
  id: 700,
  name: 'analytics: ViewDefinition partitions, materialised view register',
  async up(client) {
    await client.query(`CREATE TABLE "ViewDefinition" PARTITION OF resource FOR VALUES IN ('ViewDefinition')`);
    await client.query(
      `CREATE TABLE "ViewDefinition_History" PARTITION OF resource_history FOR VALUES IN ('ViewDefinition')`,
    );
    await client.query(`
      CREATE TABLE analytics_view (
        project_id uuid NOT NULL,
        view_id text NOT NULL,
        resource_type text NOT NULL,
        schema_name text NOT NULL,
        table_name text NOT NULL,
        definition jsonb NOT NULL,
        materialized_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, view_id),
        UNIQUE (schema_name, table_name)
      )`);
    // Write hooks look up the views of a written resource's type.
    await client.query('CREATE INDEX analytics_view_type_idx ON analytics_view (project_id, resource_type)');
  },
};
