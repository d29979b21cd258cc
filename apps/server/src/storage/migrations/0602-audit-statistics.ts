import type { Migration } from './types.js';

/**
 * Lighter planner statistics for the trail's existing partitions (ALTER on audit_event reaches
 * every partition it has): the targets audit/partitions.ts gives each new partition, and why.
 * Written out here because a migration stays as it ran.
 */
export const m0602AuditStatistics: Migration = {
  id: 602,
  name: 'audit trail: planner statistics from 3,000 sampled entries, none for content and hashes',
  async up(client) {
    const targets: [string, number][] = [
      ['project_id', 10],
      ['seq', 10],
      ['id', 10],
      ['recorded', 10],
      ['action', 10],
      ['outcome', 10],
      ['type_code', 10],
      ['agent', 10],
      ['entity', 10],
      ['patient', 10],
      ['content', 0],
      ['prev_hash', 0],
      ['hash', 0],
    ];
    await client.query(
      `ALTER TABLE audit_event ${targets.map(([c, n]) => `ALTER COLUMN ${c} SET STATISTICS ${n}`).join(', ')}`,
    );
  },
};
