import type { Migration } from './types.js';

/**
 * Terminology tables (apps/server/src/terminology/README.md): code systems and their concepts with
 * a parent-link table and its transitive closure for is-a queries, value sets (their compose), and
 * concept maps flattened to one row per source→target mapping. Rows are derived from the
 * CodeSystem, ValueSet and ConceptMap resources by the write path (and from $import), keyed by
 * (project_id, resource_id); `global` marks the server-wide content every project can use.
 */
export const m0400Terminology: Migration = {
  id: 400,
  name: 'terminology: code systems, concepts, hierarchy closure, value sets, concept maps',
  async up(client) {
    // pg_trgm makes substring display filters (type-ahead) indexable; it is a trusted extension
    // (PostgreSQL 13+) but may be missing from a minimal install, so its absence is tolerated.
    const available = await client.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'`);
    let trigram = false;
    if (available.rowCount) {
      await client.query('SAVEPOINT trgm');
      try {
        await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
        await client.query('RELEASE SAVEPOINT trgm');
        trigram = true;
      } catch {
        await client.query('ROLLBACK TO SAVEPOINT trgm');
      }
    }

    await client.query(`
      CREATE TABLE terminology_code_system (
        id bigserial PRIMARY KEY,
        project_id uuid NOT NULL,
        resource_id text NOT NULL,
        global boolean NOT NULL DEFAULT false,
        url text NOT NULL,
        version text,
        date text,
        name text,
        title text,
        status text,
        content text,
        case_sensitive boolean NOT NULL DEFAULT true,
        hierarchy_meaning text,
        property_defs jsonb NOT NULL DEFAULT '[]',
        concepts_source text NOT NULL DEFAULT 'resource',
        concept_count integer NOT NULL DEFAULT 0,
        UNIQUE (project_id, resource_id)
      )`);
    await client.query('CREATE INDEX terminology_code_system_url_idx ON terminology_code_system (url)');

    await client.query(`
      CREATE TABLE terminology_concept (
        id bigserial PRIMARY KEY,
        code_system_id bigint NOT NULL REFERENCES terminology_code_system (id) ON DELETE CASCADE,
        code text NOT NULL,
        display text,
        definition text,
        abstract boolean NOT NULL DEFAULT false,
        inactive boolean NOT NULL DEFAULT false,
        designations jsonb,
        properties jsonb,
        property_values jsonb NOT NULL DEFAULT '{}',
        UNIQUE (code_system_id, code)
      )`);
    await client.query(
      'CREATE INDEX terminology_concept_lower_code_idx ON terminology_concept (code_system_id, lower(code) text_pattern_ops)',
    );
    await client.query(
      'CREATE INDEX terminology_concept_props_idx ON terminology_concept USING gin (property_values jsonb_path_ops)',
    );
    if (trigram) {
      await client.query(
        'CREATE INDEX terminology_concept_display_trgm_idx ON terminology_concept USING gin (lower(display) gin_trgm_ops)',
      );
    } else {
      await client.query(
        'CREATE INDEX terminology_concept_display_prefix_idx ON terminology_concept (code_system_id, lower(display) text_pattern_ops)',
      );
    }

    // Direct parent links by code (a code may arrive before its parent during an import).
    await client.query(`
      CREATE TABLE terminology_concept_parent (
        code_system_id bigint NOT NULL REFERENCES terminology_code_system (id) ON DELETE CASCADE,
        child text NOT NULL,
        parent text NOT NULL,
        PRIMARY KEY (code_system_id, child, parent)
      )`);
    await client.query(
      'CREATE INDEX terminology_concept_parent_parent_idx ON terminology_concept_parent (code_system_id, parent)',
    );
    // Transitive closure of the parent links (self pairs excluded): is-a is one indexed lookup.
    await client.query(`
      CREATE TABLE terminology_concept_closure (
        code_system_id bigint NOT NULL REFERENCES terminology_code_system (id) ON DELETE CASCADE,
        ancestor text NOT NULL,
        descendant text NOT NULL,
        PRIMARY KEY (code_system_id, ancestor, descendant)
      )`);
    await client.query(
      'CREATE INDEX terminology_concept_closure_desc_idx ON terminology_concept_closure (code_system_id, descendant)',
    );

    await client.query(`
      CREATE TABLE terminology_value_set (
        id bigserial PRIMARY KEY,
        project_id uuid NOT NULL,
        resource_id text NOT NULL,
        global boolean NOT NULL DEFAULT false,
        url text,
        version text,
        date text,
        name text,
        title text,
        status text,
        compose jsonb,
        expansion jsonb,
        UNIQUE (project_id, resource_id)
      )`);
    await client.query('CREATE INDEX terminology_value_set_url_idx ON terminology_value_set (url)');

    await client.query(`
      CREATE TABLE terminology_concept_map (
        id bigserial PRIMARY KEY,
        project_id uuid NOT NULL,
        resource_id text NOT NULL,
        global boolean NOT NULL DEFAULT false,
        url text,
        version text,
        date text,
        name text,
        status text,
        source_uri text,
        target_uri text,
        groups jsonb NOT NULL DEFAULT '[]',
        UNIQUE (project_id, resource_id)
      )`);
    await client.query('CREATE INDEX terminology_concept_map_url_idx ON terminology_concept_map (url)');
    await client.query(`
      CREATE TABLE terminology_concept_map_element (
        concept_map_id bigint NOT NULL REFERENCES terminology_concept_map (id) ON DELETE CASCADE,
        group_index integer NOT NULL,
        source_system text,
        source_version text,
        source_code text NOT NULL,
        source_display text,
        target_system text,
        target_version text,
        target_code text,
        target_display text,
        equivalence text NOT NULL,
        comment text,
        depends_on jsonb,
        product jsonb
      )`);
    await client.query(
      'CREATE INDEX terminology_cm_element_source_idx ON terminology_concept_map_element (source_code, source_system)',
    );
    await client.query(
      'CREATE INDEX terminology_cm_element_target_idx ON terminology_concept_map_element (target_code, target_system)',
    );
    await client.query(
      'CREATE INDEX terminology_cm_element_map_idx ON terminology_concept_map_element (concept_map_id)',
    );
  },
};
