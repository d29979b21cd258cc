// Writing the trail off the request path: entries wait in a bounded buffer and are written in
// batches, by size or time, chained per project; the entries of writes wait in the database
// instead (audit_outbox, written with the write itself) and are moved by the same flush.
import type { Logger } from '../platform/logger.js';
import type { Pool, PoolClient } from '../platform/postgres.js';
import { copyRows, type CopyValue } from '../platform/postgres-copy.js';
import { entryHash, GENESIS } from './chain.js';
import { ensurePartitions, monthKey } from './partitions.js';
import { entryOfStored } from './stored-entry.js';
import type { TrailEntry } from './types.js';

const TRAIL_COLUMNS = [
  'project_id',
  'seq',
  'id',
  'recorded',
  'action',
  'outcome',
  'type_code',
  'agent',
  'entity',
  'patient',
  'content',
  'prev_hash',
  'hash',
];

export interface AuditWriterOptions {
  pool: Pool;
  logger: Logger;
  /** Entries kept in memory at most; past it the oldest are dropped (and counted in a warning). */
  maxBuffered: number;
  /** Entries per flush (one multi-row INSERT). */
  batchSize: number;
  /** Longest an entry waits in memory. */
  flushIntervalMs: number;
  /** Outbox entries moved between two VACUUMs of the outbox (default OUTBOX_VACUUM_EVERY). */
  vacuumOutboxEvery?: number;
}

/**
 * Every entry of a write passes through audit_outbox: inserted with the write, deleted when moved.
 * The claim walks the outbox in id order, through every dead row no VACUUM has removed yet; with
 * autovacuum off (or behind), the 50-entry transaction workload's claims read up to 238,000
 * buffers each (130 ms). The writer vacuums the outbox itself, a small table, after this many
 * entries (one VACUUM of 10,000 moved entries took 57 ms).
 */
export const OUTBOX_VACUUM_EVERY = 2_000;

/**
 * Claims (deletes and returns) up to $1 outbox entries, oldest first, skipping those another
 * process holds. The ids are collected once (an InitPlan's array), never joined: as `id IN
 * (SELECT ... LIMIT ...)`, statistics taken while the outbox was empty made the planner re-run the
 * limited subquery for every outbox row (a nested loop semi join: 14 million buffers, 2.9 s, and
 * 5,031 entries claimed by a LIMIT of 1,000).
 */
export const CLAIM_OUTBOX = `DELETE FROM audit_outbox WHERE id = ANY (ARRAY(
  SELECT id FROM audit_outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED))
  RETURNING id, project_id, entry`;

export class AuditWriter {
  private buffer: TrailEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private soon = false;
  private dropped = 0;
  /** Entries recorded so far (the buffer's first entry is number recorded - buffer.length). */
  private recorded = 0;
  /** Entries moved out of the outbox since it was last vacuumed. */
  private movedSinceVacuum = 0;
  private readonly months = new Set<string>();

  constructor(private readonly options: AuditWriterOptions) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Queues an entry; never waits and never throws (the request it records is already answered). */
  record(entry: TrailEntry): void {
    this.buffer.push(entry);
    this.recorded++;
    if (this.buffer.length > this.options.maxBuffered) {
      const over = this.buffer.length - this.options.maxBuffered;
      this.buffer.splice(0, over);
      this.dropped += over;
    }
    if (this.buffer.length >= this.options.batchSize && !this.soon) {
      // One full-batch flush queued at a time; it writes what is buffered when its turn comes.
      this.soon = true;
      this.running = this.running.then(() => {
        this.soon = false;
        return this.flushThrough(this.recorded);
      });
    }
  }

  /** Entries waiting in memory. */
  get buffered(): number {
    return this.buffer.length;
  }

  /**
   * Writes every entry buffered when called and every entry waiting in the outbox, in batches of
   * up to batchSize; one flush at a time. Entries recorded meanwhile wait for the next flush (the
   * timer's, or a full batch's), so that under load the trail is written in few large batches,
   * not in a stream of small ones that each cost a transaction.
   */
  flush(): Promise<void> {
    const through = this.recorded;
    this.running = this.running.then(() => this.flushThrough(through));
    return this.running;
  }

  /** Stops the timer and writes what is left (the services' shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async flushThrough(through: number): Promise<void> {
    if (this.dropped > 0) {
      this.options.logger.warn({ dropped: this.dropped }, 'audit buffer full: oldest read entries dropped');
      this.dropped = 0;
    }
    const { batchSize } = this.options;
    // Bounded: an outbox that keeps filling must not keep one flush running forever.
    for (let round = 0; round < 20; round++) {
      // Entries recorded before the call that still wait (the others join their batch if it has room).
      const older = Math.max(0, through - (this.recorded - this.buffer.length));
      const batch = this.buffer.splice(0, older > 0 ? batchSize : 0);
      try {
        const moved = await this.writeBatch(batch);
        this.movedSinceVacuum += moved - batch.length;
        const outboxFull = moved - batch.length >= batchSize;
        if (older <= batch.length && !outboxFull) break;
      } catch (err) {
        // Put the batch back (bounded by record's limit) and try again at the next flush.
        this.buffer.unshift(...batch.slice(0, Math.max(0, this.options.maxBuffered - this.buffer.length)));
        this.options.logger.warn({ err, entries: batch.length }, 'could not write audit entries; will retry');
        return;
      }
    }
    if (this.movedSinceVacuum >= (this.options.vacuumOutboxEvery ?? OUTBOX_VACUUM_EVERY)) {
      this.movedSinceVacuum = 0;
      // Outside any transaction (VACUUM cannot run in one); SKIP_LOCKED: another process's VACUUM will do.
      await this.options.pool.query('VACUUM (SKIP_LOCKED) audit_outbox').catch((err: unknown) => {
        this.options.logger.warn({ err }, 'could not vacuum the audit outbox');
      });
    }
  }

  /** One transaction: claim outbox rows, chain them with the batch, insert, advance the heads. */
  private async writeBatch(batch: TrailEntry[]): Promise<number> {
    const client = await this.options.pool.connect();
    try {
      await client.query('BEGIN');
      // Atomicity is what matters here, not durability: a commit lost in a crash loses its
      // outbox deletes too, so those entries are moved again; only in-memory ones are lost.
      await client.query('SET LOCAL synchronous_commit = off');
      const outbox = await client.query<{ project_id: string; entry: string }>(CLAIM_OUTBOX, [this.options.batchSize]);
      const fromOutbox = outbox.rows
        .sort((a, b) => Number((a as { id?: string }).id) - Number((b as { id?: string }).id))
        .map((r) => entryOfStored(r.project_id, r.entry));
      const all = [...fromOutbox, ...batch];
      if (all.length === 0) {
        await client.query('COMMIT');
        return 0;
      }
      await this.ensureMonths(all);
      await this.insertChained(client, all);
      await client.query('COMMIT');
      return all.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private async ensureMonths(entries: TrailEntry[]): Promise<void> {
    const missing = new Set<string>();
    for (const e of entries) {
      const month = monthKey(new Date(e.recorded));
      if (!this.months.has(month)) missing.add(month);
    }
    if (missing.size > 0) {
      await ensurePartitions(this.options.pool, missing);
      missing.forEach((m) => this.months.add(m));
    }
  }

  /**
   * Each project's chain continues from its head, locked (FOR UPDATE) until COMMIT: processes
   * flushing at once take turns per project, so every project's chain stays one sequence.
   */
  private async insertChained(client: PoolClient, entries: TrailEntry[]): Promise<void> {
    const projects = [...new Set(entries.map((e) => e.projectId))].sort();
    await client.query(
      `INSERT INTO audit_chain (project_id, seq, hash) SELECT p, 0, $2 FROM unnest($1::uuid[]) p
       ON CONFLICT (project_id) DO NOTHING`,
      [projects, GENESIS],
    );
    const heads = await client.query<{ project_id: string; seq: string; hash: Buffer }>(
      'SELECT project_id, seq, hash FROM audit_chain WHERE project_id = ANY($1::uuid[]) ORDER BY project_id FOR UPDATE',
      [projects],
    );
    const head = new Map(heads.rows.map((r) => [r.project_id, { seq: Number(r.seq), hash: r.hash }]));
    const rows = entries.map((e) => {
      const h = head.get(e.projectId) as { seq: number; hash: Buffer };
      const seq = h.seq + 1;
      const hash = entryHash(h.hash, e.projectId, seq, e.content);
      const { columns } = e;
      const row: CopyValue[] = [
        e.projectId,
        seq,
        e.id,
        e.recorded,
        columns.action,
        columns.outcome,
        columns.typeCode,
        columns.agent,
        columns.entity,
        columns.patient,
        e.content,
        h.hash,
        hash,
      ];
      head.set(e.projectId, { seq, hash });
      return row;
    });
    // COPY: the cheapest way in for a batch of rows (platform/postgres-copy.ts).
    await copyRows(client, 'audit_event', TRAIL_COLUMNS, rows);
    const ids = [...head.keys()];
    await client.query(
      `UPDATE audit_chain c SET seq = u.seq, hash = u.hash
         FROM unnest($1::uuid[], $2::bigint[], $3::bytea[]) AS u(project_id, seq, hash)
        WHERE c.project_id = u.project_id`,
      [ids, ids.map((p) => head.get(p)!.seq), ids.map((p) => head.get(p)!.hash)],
    );
  }
}
