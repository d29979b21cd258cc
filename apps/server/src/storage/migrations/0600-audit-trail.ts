import type { Migration } from './types.js';

/**
 * The access audit trail (audit/): entries partitioned by month of `recorded`, so that purging by
 * age drops whole partitions and a search bounded by date reads only the months it names. The
 * monthly partitions themselves are created by the writer as months come (audit/partitions.ts).
 *
 * - `audit_event`: one row per entry; `content` is the AuditEvent served, the array columns are
 *   what searches match (GIN: references are unique server-wide, so a match by reference is
 *   selective before the project is checked), `(project_id, recorded)` serves listing and date
 *   ranges, `(project_id, seq)` walks a project's chain. `hash` = sha256(prev_hash, project, seq,
 *   content): the chain (audit/chain.ts).
 * - `audit_chain`: each project's chain head (last seq and hash) and the sequence number up to
 *   which retention purged; its row lock orders the chain across processes.
 * - `audit_outbox`: entries of writes, inserted in the write's own statement or transaction, moved
 *   to the trail by the writer; what survives a crash before they were moved.
 */
export const m0600AuditTrail: Migration = {
  id: 600,
  name: 'audit trail: monthly partitioned entries, chain heads, write outbox',
  async up(client) {
    await client.query(`
      CREATE TABLE audit_event (
        project_id uuid NOT NULL,
        seq bigint NOT NULL,
        id text NOT NULL,
        recorded timestamptz NOT NULL,
        action char(1) NOT NULL,
        outcome text NOT NULL,
        type_code text NOT NULL,
        agent text[] NOT NULL,
        entity text[] NOT NULL,
        patient text[] NOT NULL,
        content text NOT NULL,
        prev_hash bytea NOT NULL,
        hash bytea NOT NULL
      ) PARTITION BY RANGE (recorded)`);
    await client.query('CREATE INDEX audit_event_project_recorded_idx ON audit_event (project_id, recorded, seq)');
    await client.query('CREATE INDEX audit_event_project_seq_idx ON audit_event (project_id, seq)');
    await client.query('CREATE INDEX audit_event_id_idx ON audit_event (id)');
    await client.query('CREATE INDEX audit_event_action_idx ON audit_event (project_id, action, recorded)');
    await client.query('CREATE INDEX audit_event_outcome_idx ON audit_event (project_id, outcome, recorded)');
    for (const column of ['agent', 'entity', 'patient']) {
      await client.query(`CREATE INDEX audit_event_${column}_idx ON audit_event USING gin (${column})`);
    }
    await client.query(`
      CREATE TABLE audit_chain (
        project_id uuid PRIMARY KEY,
        seq bigint NOT NULL,
        hash bytea NOT NULL,
        purged_through bigint NOT NULL DEFAULT 0
      )`);
    await client.query(`
      CREATE TABLE audit_outbox (
        id bigserial PRIMARY KEY,
        project_id uuid NOT NULL,
        entry text NOT NULL
      )`);
  },
};
