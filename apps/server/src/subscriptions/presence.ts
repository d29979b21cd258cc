import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/logger.js';
import type { Queryable } from '../platform/postgres.js';

/**
 * Who is connected: the profiles ("Patient/123") whose subscription websockets are bound in this
 * process, kept in table websocket_presence (migration 302) so that any process can ask. A row is
 * written when a profile's first socket binds here, refreshed on every ping round while its sockets
 * answer, and deleted when its last socket here closes; a process that dies leaves rows that stop
 * being refreshed, and count as gone once older than `staleAfterMs`.
 */
export class WebsocketPresence {
  readonly processId = randomUUID();
  /** Sockets bound here per "projectId profile". */
  private readonly counts = new Map<string, number>();
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
  ) {}

  /** A socket of `profile` bound in `projectId`; returns the key to pass to `leave`. */
  join(projectId: string, profile: string): string {
    const key = `${projectId} ${profile}`;
    const n = this.counts.get(key) ?? 0;
    this.counts.set(key, n + 1);
    if (n === 0) {
      this.queue(
        `INSERT INTO websocket_presence (process_id, project_id, profile, seen_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (project_id, profile, process_id) DO UPDATE SET seen_at = now()`,
        [this.processId, projectId, profile],
      );
    }
    return key;
  }

  /** That socket closed (or unbound). */
  leave(key: string): void {
    const n = (this.counts.get(key) ?? 0) - 1;
    if (n > 0) {
      this.counts.set(key, n);
      return;
    }
    this.counts.delete(key);
    const [projectId, profile] = key.split(' ');
    this.queue('DELETE FROM websocket_presence WHERE process_id = $1 AND project_id = $2 AND profile = $3', [
      this.processId,
      projectId,
      profile,
    ]);
  }

  /** Every profile connected here is still here (called once per ping round). */
  refresh(): void {
    if (this.counts.size === 0) {
      return;
    }
    this.queue('UPDATE websocket_presence SET seen_at = now() WHERE process_id = $1', [this.processId]);
  }

  /** Resolves once the writes asked for so far are done (tests). */
  settled(): Promise<unknown> {
    return this.pending;
  }

  /** This process's rows go (graceful stop). */
  async close(): Promise<void> {
    this.counts.clear();
    this.queue('DELETE FROM websocket_presence WHERE process_id = $1', [this.processId]);
    await this.pending;
  }

  /** Writes run one after another, so a leave never overtakes the join before it. */
  private queue(sql: string, params: unknown[]): void {
    this.pending = this.pending
      .then(() => this.db.query(sql, params))
      .catch((err: unknown) => this.logger.warn({ err }, 'websocket presence not recorded'));
  }
}

/**
 * True when `profile` has a subscription websocket bound in `projectId` on some process that
 * refreshed its presence within `staleAfterMs`.
 */
export async function isConnected(
  db: Queryable,
  projectId: string,
  profile: string,
  staleAfterMs: number,
): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM websocket_presence
      WHERE project_id = $1 AND profile = $2 AND seen_at > now() - make_interval(secs => $3::double precision)
      LIMIT 1`,
    [projectId, profile, staleAfterMs / 1000],
  );
  return rows.length > 0;
}
