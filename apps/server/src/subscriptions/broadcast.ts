import type { Logger } from '../platform/logger.js';
import type { Pool, PoolClient } from '../platform/postgres.js';

/** The PostgreSQL notification channel every Hearth process listens on for subscription traffic. */
export const BROADCAST_CHANNEL = 'hearth_subscriptions';

/** NOTIFY payloads are limited to 8000 bytes; messages stay far below (references, not resources). */
const MAX_PAYLOAD = 7900;

export type BroadcastHandler = (message: Record<string, unknown>) => void;

/** Hands a received payload to every handler; a payload that is not JSON, or a handler that throws, is passed over. */
export function dispatchBroadcast(payload: string, handlers: BroadcastHandler[], logger: Logger): void {
  let message: Record<string, unknown>;
  try {
    message = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return;
  }
  for (const handler of handlers) {
    try {
      handler(message);
    } catch (err) {
      logger.warn({ err }, 'broadcast handler failed');
    }
  }
}

/** Messages to every server process: websocket notifications and cache invalidations. */
export interface Broadcaster {
  onMessage(handler: BroadcastHandler): void;
  start(): Promise<void>;
  /** Sends a message to every process (this one included). */
  publish(message: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Messages to every server process (websocket notifications, cache invalidations) over PostgreSQL
 * LISTEN/NOTIFY, so the single PostgreSQL Hearth needs is also its message bus. One pooled
 * connection per process listens; it is replaced when it drops. A NOTIFY sent while a process is
 * reconnecting is missed by that process (websocket clients re-bind and carry on; caches expire).
 */
export class PgBroadcaster implements Broadcaster {
  private client?: PoolClient;
  private readonly handlers: BroadcastHandler[] = [];
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  onMessage(handler: BroadcastHandler): void {
    this.handlers.push(handler);
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) {
      return;
    }
    let client: PoolClient | undefined;
    try {
      client = await this.pool.connect();
      const connected = client;
      client.on('notification', (msg) => {
        if (msg.channel === BROADCAST_CHANNEL && msg.payload) {
          dispatchBroadcast(msg.payload, this.handlers, this.logger);
        }
      });
      client.on('error', (err) => {
        this.logger.warn({ err }, 'broadcast connection lost; reconnecting');
        this.drop(connected, err);
      });
      // LISTEN holds the connection for the process's lifetime; statement timeouts do not apply to waiting.
      await client.query(`LISTEN ${BROADCAST_CHANNEL}`);
      this.client = client;
    } catch (err) {
      this.logger.warn({ err }, 'could not listen for broadcasts; retrying');
      // A connection that was opened but could not LISTEN (the database going down again) goes back
      // broken, or each retry would keep one more of the pool's connections.
      if (client) {
        this.drop(client, err as Error);
      } else {
        this.scheduleReconnect();
      }
    }
  }

  private drop(client: PoolClient, err?: Error): void {
    if (this.client === client) {
      this.client = undefined;
    }
    try {
      client.release(err ?? true);
    } catch {
      // Already released.
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) {
      return;
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, 1000);
    this.retryTimer.unref();
  }

  /** Sends a message to every process (this one included). */
  async publish(message: Record<string, unknown>): Promise<void> {
    const payload = JSON.stringify(message);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) {
      throw new Error('Broadcast message too large');
    }
    await this.pool.query('SELECT pg_notify($1, $2)', [BROADCAST_CHANNEL, payload]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.query(`UNLISTEN ${BROADCAST_CHANNEL}`).catch(() => undefined);
      client.release();
    }
  }
}
