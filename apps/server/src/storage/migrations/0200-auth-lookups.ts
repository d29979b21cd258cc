import type { Migration } from './types.js';

/**
 * Lookups the sign-in path needs before any search index exists for them (user by email,
 * memberships of a user, login by code, domain configuration), as expression indexes on the
 * platform types' partitions, and the counters shared by every process for rate limits and
 * brute-force protection. Deleted rows have empty content, hence nullif(content, '').
 */
export const m0200AuthLookups: Migration = {
  id: 200,
  name: 'auth: platform lookups and rate-limit counters',
  async up(client) {
    const json = "nullif(content, '')::jsonb";
    await client.query(`CREATE INDEX user_email_idx ON "User" ((lower(${json}->>'email'))) WHERE NOT deleted`);
    await client.query(
      `CREATE INDEX membership_user_idx ON "ProjectMembership" ((${json}->'user'->>'reference')) WHERE NOT deleted`,
    );
    await client.query(
      `CREATE INDEX membership_profile_idx ON "ProjectMembership" ((${json}->'profile'->>'reference')) WHERE NOT deleted`,
    );
    await client.query(`CREATE INDEX login_code_idx ON "Login" ((${json}->>'code')) WHERE NOT deleted`);
    await client.query(
      `CREATE INDEX domain_configuration_domain_idx ON "DomainConfiguration" ((lower(${json}->>'domain'))) WHERE NOT deleted`,
    );
    // Fixed-window counters: one row per (key, window). Unlogged: losing them in a crash only resets limits.
    await client.query(`CREATE UNLOGGED TABLE hearth_rate_counter (
      key text NOT NULL,
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (key, window_start)
    )`);
    await client.query('CREATE INDEX hearth_rate_counter_window_idx ON hearth_rate_counter (window_start)');
  },
};
