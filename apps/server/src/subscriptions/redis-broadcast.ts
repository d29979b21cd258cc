import { Redis } from 'ioredis';
import type { Logger } from '../platform/logger.js';
import { BROADCAST_CHANNEL, dispatchBroadcast, type BroadcastHandler, type Broadcaster } from './broadcast.js';

/**
 * The broadcaster over Redis publish/subscribe, used when HEARTH_REDIS_URL is set (as the rate
 * limiter's counters are): the same messages as PgBroadcaster, without LISTEN/NOTIFY's 8000-byte
 * payload limit and off the database. One connection publishes, one subscribes; ioredis reconnects
 * both and subscribes again after a drop.
 */
export class RedisBroadcaster implements Broadcaster {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly handlers: BroadcastHandler[] = [];

  constructor(
    url: string,
    private readonly logger: Logger,
  ) {
    const options = { maxRetriesPerRequest: 2, lazyConnect: true };
    this.publisher = new Redis(url, options);
    this.subscriber = new Redis(url, options);
    for (const connection of [this.publisher, this.subscriber]) {
      connection.on('error', (err: Error) => this.logger.warn({ err }, 'broadcast (Redis) connection error'));
    }
    this.subscriber.on('message', (channel: string, payload: string) => {
      if (channel === BROADCAST_CHANNEL) {
        dispatchBroadcast(payload, this.handlers, this.logger);
      }
    });
  }

  onMessage(handler: BroadcastHandler): void {
    this.handlers.push(handler);
  }

  async start(): Promise<void> {
    await Promise.all([this.publisher.connect(), this.subscriber.connect()]);
    await this.subscriber.subscribe(BROADCAST_CHANNEL);
  }

  async publish(message: Record<string, unknown>): Promise<void> {
    await this.publisher.publish(BROADCAST_CHANNEL, JSON.stringify(message));
  }

  async stop(): Promise<void> {
    await Promise.all([this.subscriber.quit().catch(() => undefined), this.publisher.quit().catch(() => undefined)]);
  }
}
