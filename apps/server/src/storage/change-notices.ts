import type { SearchIndexer, StoredVersion, WriteListener } from './types.js';

/** Resource types written in one project: what a process-local cache derived from them must drop. */
export interface ChangeNotice {
  projectId: string;
  types: string[];
}

type NoticeHandler = (notice: ChangeNotice) => void;

/** The message kind on the server's message bus (subscriptions/broadcast.ts). */
const KIND = 'changed';

/** The part of the message bus (PostgreSQL LISTEN/NOTIFY or Redis) change notices travel on. */
export interface NoticeBus {
  onMessage(handler: (message: Record<string, unknown>) => void): void;
  publish(message: Record<string, unknown>): Promise<void>;
}

/**
 * Tells the process-local caches derived from stored resources (terminology expansions, a
 * project's search parameters, subscription lists…) of writes made by any process. Caches say
 * which resource types they are derived from (`on`); writes of those types are announced on the
 * message bus, from inside the writing transaction on PostgreSQL (`withChangeNotices`: delivered
 * at commit, never for a rolled-back write) or after the commit on Redis (`publishAfterCommit`).
 * Every process, the writer included, hears the notice. A process whose bus connection is
 * reconnecting misses notices: caches also have a maximum age (HEARTH_CACHE_MAX_AGE_MS).
 */
export class ChangeNotices {
  private readonly handlers: { types: Set<string>; handler: NoticeHandler }[] = [];
  private readonly watched = new Set<string>();

  /** Calls `handler` for every write of these resource types, in any process. */
  on(types: string[], handler: NoticeHandler): void {
    this.handlers.push({ types: new Set(types), handler });
    types.forEach((t) => this.watched.add(t));
  }

  /** True when some cache is derived from this resource type. */
  watches(resourceType: string): boolean {
    return this.watched.has(resourceType);
  }

  /** The notices for these written versions (one per project), as bus messages. */
  messagesFor(versions: StoredVersion[]): Record<string, unknown>[] {
    const byProject = new Map<string, Set<string>>();
    for (const v of versions) {
      if (this.watched.has(v.resourceType)) {
        const types = byProject.get(v.projectId) ?? new Set<string>();
        types.add(v.resourceType);
        byProject.set(v.projectId, types);
      }
    }
    return [...byProject].map(([p, types]) => ({ k: KIND, p, t: [...types] }));
  }

  /** Hands a bus message to the caches it concerns; other messages are ignored. */
  receive(message: Record<string, unknown>): void {
    const notice = parseNotice(message);
    if (!notice) {
      return;
    }
    for (const { types, handler } of this.handlers) {
      if (notice.types.some((t) => types.has(t))) {
        handler(notice);
      }
    }
  }

  /** Feeds every message of the bus to `receive`. */
  listenTo(bus: Pick<NoticeBus, 'onMessage'>): void {
    bus.onMessage((message) => this.receive(message));
  }
}

function parseNotice(message: Record<string, unknown>): ChangeNotice | undefined {
  if (message.k !== KIND || typeof message.p !== 'string' || !Array.isArray(message.t)) {
    return undefined;
  }
  return { projectId: message.p, types: message.t.filter((t): t is string => typeof t === 'string') };
}

/**
 * Announces writes of watched types from inside their own transaction (pg_notify on `channel`,
 * which PostgreSQL delivers at commit, never for a rolled-back write), so that every process drops
 * what it cached (the writing process at once: `applyOwnWrites`). For the PostgreSQL message bus
 * only: Redis cannot send within the transaction.
 */
export function withChangeNotices(inner: SearchIndexer, notices: ChangeNotices, channel: string): SearchIndexer {
  const watched = (versions: StoredVersion[]) => versions.some((v) => notices.watches(v.resourceType));
  return {
    compartmentsOf: (resource) => inner.compartmentsOf(resource),
    // A one-statement write carries only search rows: writes of watched types take the indexing path.
    newResourceParts: inner.newResourceParts
      ? async (db, versions, param) => (watched(versions) ? undefined : inner.newResourceParts?.(db, versions, param))
      : undefined,
    replacedResourceParts: inner.replacedResourceParts
      ? async (db, version, param, guard) =>
          notices.watches(version.resourceType) ? undefined : inner.replacedResourceParts?.(db, version, param, guard)
      : undefined,
    copyRows: inner.copyRows
      ? async (client, versions) => !watched(versions) && ((await inner.copyRows?.(client, versions)) ?? false)
      : undefined,
    async index(client, versions) {
      await inner.index(client, versions);
      for (const message of notices.messagesFor(versions)) {
        await client.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify(message)]);
      }
    },
  };
}

/**
 * A write listener giving the writing process's own caches their notices at once, after the commit
 * and before the write is answered: the bus delivers its message to this process too, but
 * asynchronously, so a request right after the write could otherwise still read the old cache.
 * The bus message, heard later, drops them again (harmless: handlers only drop what they hold).
 */
export function applyOwnWrites(notices: ChangeNotices): WriteListener {
  return (events) => {
    for (const message of notices.messagesFor(events.map((e) => e.version))) {
      notices.receive(message);
    }
  };
}

/** A write listener announcing committed writes of watched types (for the Redis message bus). */
export function publishAfterCommit(notices: ChangeNotices, bus: Pick<NoticeBus, 'publish'>): WriteListener {
  return (events) => {
    for (const message of notices.messagesFor(events.map((e) => e.version))) {
      void bus.publish(message).catch(() => undefined);
    }
  };
}
