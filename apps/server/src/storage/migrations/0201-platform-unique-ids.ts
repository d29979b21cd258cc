import type { Migration } from './types.js';

/** Spelled out (not imported) so that this migration never changes once applied. */
export const PLATFORM_TYPES = [
  'AccessPolicy',
  'Agent',
  'AsyncJob',
  'Bot',
  'BulkDataExport',
  'ClientApplication',
  'DomainConfiguration',
  'IdentityProvider',
  'JsonWebKey',
  'Login',
  'PasswordChangeRequest',
  'Project',
  'ProjectMembership',
  'SmartAppLaunch',
  'User',
  'UserConfiguration',
  'UserSecurityRequest',
];

/**
 * Platform resources refer to each other by id alone (ProjectMembership.user, Login.membership),
 * so an id must name one resource server-wide: no project can shadow another's User or membership
 * by writing a resource with the same id.
 */
export const m0201PlatformUniqueIds: Migration = {
  id: 201,
  name: 'auth: platform resource ids are unique across projects',
  async up(client) {
    for (const type of PLATFORM_TYPES) {
      await client.query(`CREATE UNIQUE INDEX "${type}_id_unique_idx" ON "${type}" (id)`);
    }
  },
};
