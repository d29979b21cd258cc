import type { Migration } from './types.js';

/**
 * The trail's action and outcome indexes cover only the rare entries: almost every entry is a
 * successful read (action R, outcome 0), and those indexes only cost its insert, since a search
 * for reads or successes is served by (project_id, recorded) anyway. Searches for writes,
 * executions or failures still find them through an index (the search compares `action` as the
 * column's own type, char(1): compared as text, no index on it could serve).
 */
export const m0601AuditPartialIndexes: Migration = {
  id: 601,
  name: 'audit trail: action and outcome indexes only for the entries other than successful reads',
  async up(client) {
    await client.query('DROP INDEX IF EXISTS audit_event_action_idx');
    await client.query('DROP INDEX IF EXISTS audit_event_outcome_idx');
    await client.query(
      `CREATE INDEX audit_event_action_idx ON audit_event (project_id, action, recorded) WHERE action <> 'R'`,
    );
    await client.query(
      `CREATE INDEX audit_event_outcome_idx ON audit_event (project_id, outcome, recorded) WHERE outcome <> '0'`,
    );
  },
};
