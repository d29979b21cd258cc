import PgBoss from 'pg-boss';
import type { Migration } from './types.js';

/** The schema pg-boss keeps its queues in (jobs/queue.ts uses the same name). */
export const JOB_SCHEMA = 'pgboss';

/**
 * Installs pg-boss's tables with the other migrations, so that a fresh database (and the test
 * template) is complete before any process starts. pg-boss's construction plan carries its own
 * BEGIN/COMMIT; here it runs inside the migration's transaction instead. Later pg-boss versions
 * upgrade their schema themselves at start-up, under their own advisory lock.
 */
export const m0300JobQueue: Migration = {
  id: 300,
  name: 'background jobs: pg-boss queue schema',
  async up(client) {
    const plan = PgBoss.getConstructionPlans(JOB_SCHEMA)
      .replace(/^\s*BEGIN;\s*$/m, '')
      .replace(/^\s*COMMIT;\s*$/m, '');
    await client.query(plan);
  },
};
