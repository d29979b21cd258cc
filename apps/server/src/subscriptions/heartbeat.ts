import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/logger.js';
import type { Queryable } from '../platform/postgres.js';
import type { ActiveSubscriptions } from './active.js';
import type { SubscriptionListener } from './listener.js';
import { recoverWindow, type RecoveryWindow } from './recovery.js';

/** A process silent for this many intervals is taken as dead. */
export const DEAD_AFTER_BEATS = 4;
/**
 * How far before a dead process's last beat (or its oldest unqueued change) its window starts: a
 * version's lastUpdated is stamped before its transaction commits, so a long transaction that
 * committed after the beat carries an earlier time; this also absorbs clock skew between hosts.
 */
export const MARGIN_BEFORE_MS = 30_000;
/** How far past its last beat + one interval a dead process's window ends (clock skew). */
export const MARGIN_AFTER_MS = 5_000;

export interface HeartbeatOptions {
  db: Queryable;
  active: Pick<ActiveSubscriptions, 'types'>;
  listener: Pick<SubscriptionListener, 'oldestUnqueued' | 'track' | 'queue'>;
  logger: Logger;
  intervalMs: number;
}

interface ClaimedRow {
  process_id: string;
  beat_at: Date;
  pending_since: Date | null;
}

/** The changes a dead process may have lost: from before its last beat or oldest unqueued change, to past its next beat. */
export function recoveryWindow(row: ClaimedRow, intervalMs: number): RecoveryWindow {
  const start = row.pending_since && row.pending_since < row.beat_at ? row.pending_since : row.beat_at;
  return {
    from: new Date(start.getTime() - MARGIN_BEFORE_MS),
    to: new Date(row.beat_at.getTime() + intervalMs + MARGIN_AFTER_MS),
  };
}

/**
 * Crash recovery of the subscription listener: this process's row in subscription_listener_heartbeat
 * is beaten every interval with the oldest change it has heard but not queued, and the same
 * statement claims (deletes) the rows of processes silent for DEAD_AFTER_BEATS intervals. Each
 * claimed window is re-read from history and queued through the listener; until that is done the
 * window counts as this process's own unqueued change (written with the claim, in one statement),
 * so that a crash of the recovering process loses nothing either. Changes of live processes inside
 * the window are evaluated twice: after a crash, notifications are at least once.
 */
export class ListenerHeartbeat {
  readonly processId = randomUUID();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly options: HeartbeatOptions) {}

  /** Beats (and recovers) once now, then every interval. */
  async start(): Promise<void> {
    await this.beat();
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.beat()
        .then(() => undefined)
        .catch((err: unknown) => this.options.logger.warn({ err }, 'subscription listener heartbeat failed'))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) {
            this.schedule();
          }
        });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** One statement: claims dead processes' rows and records this process's beat (and their windows as pending). */
  async beat(): Promise<RecoveryWindow[]> {
    const { db, listener, intervalMs } = this.options;
    const claimed = await db.query<ClaimedRow>(
      `WITH dead AS (
         SELECT process_id FROM subscription_listener_heartbeat
          WHERE process_id <> $1::uuid AND beat_at < now() - make_interval(secs => $3::float8 / 1000)
          FOR UPDATE SKIP LOCKED
       ), claimed AS (
         DELETE FROM subscription_listener_heartbeat h USING dead
          WHERE h.process_id = dead.process_id
         RETURNING h.process_id, h.beat_at, h.pending_since
       ), own AS (
         INSERT INTO subscription_listener_heartbeat (process_id, started_at, beat_at, pending_since)
         VALUES ($1::uuid, now(), now(),
                 least($2::timestamptz, (SELECT min(least(beat_at, pending_since)) FROM claimed)))
         ON CONFLICT (process_id) DO UPDATE SET beat_at = now(), pending_since = EXCLUDED.pending_since
       )
       SELECT process_id, beat_at, pending_since FROM claimed`,
      [this.processId, listener.oldestUnqueued() ?? null, intervalMs * DEAD_AFTER_BEATS],
    );
    const windows = claimed.rows.map((row) => recoveryWindow(row, intervalMs));
    for (const [i, window] of windows.entries()) {
      this.options.logger.warn(
        { deadProcess: claimed.rows[i].process_id, from: window.from, to: window.to },
        'a process died: re-queuing subscription evaluations of its last changes',
      );
      // Pending from the window's raw start (the margin is applied again if this process dies too).
      const row = claimed.rows[i];
      const since = row.pending_since && row.pending_since < row.beat_at ? row.pending_since : row.beat_at;
      void listener
        .track(since, () =>
          recoverWindow(db, this.options.active, window, (changes) => listener.queue(changes)).then(() => undefined),
        )
        .catch(() => undefined);
    }
    return windows;
  }

  /**
   * Graceful stop: no more beats or claims, then `drain` (the listener's); the row goes when
   * everything was queued, else it stays and ages, so that another process recovers this one's window.
   */
  async stop(drain: () => Promise<boolean>): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (await drain()) {
      await this.options.db.query('DELETE FROM subscription_listener_heartbeat WHERE process_id = $1::uuid', [
        this.processId,
      ]);
    }
  }
}
