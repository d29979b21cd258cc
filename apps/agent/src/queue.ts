// The agent's on-disk queue (SQLite): every inbound message from the moment it is received until
// the server has answered it, and every $push until it has been sent out, so that neither is lost
// when the server is unreachable or the agent restarts. Inbound messages are kept a while after
// delivery, so a sender's retransmission (same MSH-10, or same content) is recognised.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';

export interface InboundRow {
  id: number;
  /** Stable across restarts: the server remembers deliveries by it (transmit callback). */
  uuid: string;
  channel: string;
  /** One sender connection: rows of a stream are delivered one at a time, in order. */
  stream: string;
  contentType: string;
  body: string;
  remote: string;
  state: 'pending' | 'done' | 'failed';
  answerType?: string;
  answerBody?: string;
  statusCode?: number;
}

export interface PushRow {
  callback: string;
  channel?: string;
  destination: string;
  contentType: string;
  body: string;
  timeoutMs: number;
}

/** Delivered messages are remembered for duplicate detection this long. */
const REMEMBER_MS = 24 * 3600_000;

interface RawInbound {
  id: number;
  uuid: string;
  channel: string;
  stream: string;
  content_type: string;
  body: string;
  remote: string;
  state: InboundRow['state'];
  answer_type: string | null;
  answer_body: string | null;
  status_code: number | null;
}

function toRow(r: RawInbound): InboundRow {
  return {
    id: r.id,
    uuid: r.uuid,
    channel: r.channel,
    stream: r.stream,
    contentType: r.content_type,
    body: r.body,
    remote: r.remote,
    state: r.state,
    ...(r.answer_type !== null ? { answerType: r.answer_type } : {}),
    ...(r.answer_body !== null ? { answerBody: r.answer_body } : {}),
    ...(r.status_code !== null ? { statusCode: r.status_code } : {}),
  };
}

export class MessageQueue {
  private readonly db: Database.Database;
  private readonly statements;

  constructor(path: string) {
    this.db = new Database(path);
    // WAL: a committed insert survives the agent's crash; NORMAL syncs at checkpoints (a power
    // loss may lose the last moments, a process crash loses nothing).
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS inbound (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uuid TEXT NOT NULL,
        channel TEXT NOT NULL,
        stream TEXT NOT NULL,
        dedupe_key TEXT NOT NULL,
        content_type TEXT NOT NULL,
        body TEXT NOT NULL,
        remote TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        answer_type TEXT,
        answer_body TEXT,
        status_code INTEGER
      );
      CREATE UNIQUE INDEX IF NOT EXISTS inbound_dedupe ON inbound (channel, dedupe_key);
      CREATE INDEX IF NOT EXISTS inbound_pending ON inbound (stream, id) WHERE state = 'pending';
      CREATE TABLE IF NOT EXISTS push (
        callback TEXT PRIMARY KEY,
        channel TEXT,
        destination TEXT NOT NULL,
        content_type TEXT NOT NULL,
        body TEXT NOT NULL,
        timeout_ms INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );`);
    this.statements = {
      insert: this.db.prepare(
        `INSERT INTO inbound (uuid, channel, stream, dedupe_key, content_type, body, remote, received_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channel, dedupe_key) DO NOTHING`,
      ),
      byKey: this.db.prepare('SELECT * FROM inbound WHERE channel = ? AND dedupe_key = ?'),
      next: this.db.prepare("SELECT * FROM inbound WHERE stream = ? AND state = 'pending' ORDER BY id LIMIT 1"),
      streams: this.db.prepare("SELECT stream FROM inbound WHERE state = 'pending' GROUP BY stream ORDER BY min(id)"),
      finish: this.db.prepare(
        'UPDATE inbound SET state = ?, answer_type = ?, answer_body = ?, status_code = ? WHERE id = ?',
      ),
      pendingCount: this.db.prepare("SELECT count(*) AS n FROM inbound WHERE state = 'pending'"),
      prune: this.db.prepare("DELETE FROM inbound WHERE state <> 'pending' AND received_at < ?"),
      savePush: this.db.prepare(
        `INSERT OR REPLACE INTO push (callback, channel, destination, content_type, body, timeout_ms, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      pushes: this.db.prepare('SELECT * FROM push ORDER BY created_at'),
      removePush: this.db.prepare('DELETE FROM push WHERE callback = ?'),
    };
  }

  /**
   * Stores a received message (committed when this returns). A message whose key was seen on the
   * channel before is not stored again: the earlier row is returned with `duplicate`.
   */
  enqueue(message: {
    channel: string;
    stream: string;
    key: string;
    contentType: string;
    body: string;
    remote: string;
  }): { row: InboundRow; duplicate: boolean } {
    const result = this.statements.insert.run(
      randomUUID(),
      message.channel,
      message.stream,
      message.key,
      message.contentType,
      message.body,
      message.remote,
      Date.now(),
    );
    const row = toRow(this.statements.byKey.get(message.channel, message.key) as RawInbound);
    return { row, duplicate: result.changes === 0 };
  }

  nextPending(stream: string): InboundRow | undefined {
    const raw = this.statements.next.get(stream) as RawInbound | undefined;
    return raw ? toRow(raw) : undefined;
  }

  /** Streams with messages still to deliver, oldest first. */
  pendingStreams(): string[] {
    return (this.statements.streams.all() as { stream: string }[]).map((r) => r.stream);
  }

  pendingCount(): number {
    return (this.statements.pendingCount.get() as { n: number }).n;
  }

  finish(
    id: number,
    state: 'done' | 'failed',
    answer: { contentType: string; body: string; statusCode: number },
  ): void {
    this.statements.finish.run(state, answer.contentType, answer.body, answer.statusCode, id);
  }

  /** Forgets delivered messages older than the duplicate window. */
  prune(now = Date.now()): number {
    return this.statements.prune.run(now - REMEMBER_MS).changes;
  }

  savePush(push: PushRow): void {
    this.statements.savePush.run(
      push.callback,
      push.channel ?? null,
      push.destination,
      push.contentType,
      push.body,
      push.timeoutMs,
      Date.now(),
    );
  }

  pushes(): PushRow[] {
    return (
      this.statements.pushes.all() as {
        callback: string;
        channel: string | null;
        destination: string;
        content_type: string;
        body: string;
        timeout_ms: number;
      }[]
    ).map((r) => ({
      callback: r.callback,
      ...(r.channel !== null ? { channel: r.channel } : {}),
      destination: r.destination,
      contentType: r.content_type,
      body: r.body,
      timeoutMs: r.timeout_ms,
    }));
  }

  removePush(callback: string): void {
    this.statements.removePush.run(callback);
  }

  close(): void {
    this.db.close();
  }
}
