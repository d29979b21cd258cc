// Where writes run: their own transaction, or a savepoint of the caller's. Listeners hear of a
// write only after the COMMIT that makes it visible.
import { withTransaction, type PoolClient } from '../platform/postgres.js';
import type { StorageContext } from './context.js';
import type { WriteEvent } from './types.js';

/**
 * Runs fn in a write transaction: a new one, or a savepoint inside the caller's (so a failed
 * write leaves the caller's transaction usable). The events fn collects are emitted after the
 * commit (or, inside a caller's transaction, after the caller's commit).
 */
export async function inWriteTransaction<T>(
  ctx: StorageContext,
  fn: (client: PoolClient, events: WriteEvent[]) => Promise<T>,
): Promise<T> {
  const events: WriteEvent[] = [];
  let result: T;
  if (ctx.client) {
    const client = ctx.client;
    await client.query('SAVEPOINT hearth_write');
    try {
      result = await fn(client, events);
      await client.query('RELEASE SAVEPOINT hearth_write');
    } catch (err) {
      await client.query('ROLLBACK TO SAVEPOINT hearth_write');
      throw err;
    }
  } else {
    result = await withTransaction(ctx.deps.pool, (client) => fn(client, events));
  }
  ctx.emit(events);
  return result;
}
