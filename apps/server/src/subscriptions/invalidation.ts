import type { SearchIndexer, StoredVersion } from '../storage/types.js';
import { BROADCAST_CHANNEL } from './broadcast.js';

function subscriptionProjects(versions: StoredVersion[]): Set<string> {
  return new Set(versions.filter((v) => v.resourceType === 'Subscription').map((v) => v.projectId));
}

/**
 * Tells every process that a project's subscriptions changed from inside the Subscription write's
 * own transaction (PostgreSQL delivers a NOTIFY at commit, and never for a rolled-back write), so
 * that the other processes drop their cached list before the write is answered. Told after the
 * commit instead (the listener's broadcast, a batch window later), a write sent to another process
 * right after the answer could be evaluated against the list without the new subscription.
 * For the PostgreSQL message bus only (services.ts): Redis cannot send within the transaction.
 */
export function withSubscriptionInvalidation(inner: SearchIndexer): SearchIndexer {
  return {
    compartmentsOf: (resource) => inner.compartmentsOf(resource),
    // A one-statement write carries only search rows: Subscription writes take the indexing path.
    newResourceParts: inner.newResourceParts
      ? async (db, versions, param) =>
          subscriptionProjects(versions).size > 0 ? undefined : inner.newResourceParts?.(db, versions, param)
      : undefined,
    replacedResourceParts: inner.replacedResourceParts
      ? async (db, version, param, guard) =>
          version.resourceType === 'Subscription' ? undefined : inner.replacedResourceParts?.(db, version, param, guard)
      : undefined,
    async index(client, versions) {
      await inner.index(client, versions);
      for (const projectId of subscriptionProjects(versions)) {
        await client.query('SELECT pg_notify($1, $2)', [
          BROADCAST_CHANNEL,
          JSON.stringify({ k: 'invalidate', p: projectId }),
        ]);
      }
    },
  };
}
