import type { Migration } from './types.js';
// 0201's own list: both migrations are frozen, so sharing it can never change either.
import { PLATFORM_TYPES } from './0201-platform-unique-ids.js';

/**
 * Since 0002 every type's key is (resource_type, id), which makes an id unique server-wide for
 * platform types as for all others, so 0201's indexes only cost writes. They also made a race of
 * two creates of one id fail (a unique index that is not ON CONFLICT's arbiter raises instead of
 * letting the loser update).
 */
export const m0202PlatformIdsByKey: Migration = {
  id: 202,
  name: 'auth: platform ids are unique through the resource key (0201 indexes dropped)',
  async up(client) {
    for (const type of PLATFORM_TYPES) {
      await client.query(`DROP INDEX "${type}_id_unique_idx"`);
    }
  },
};
