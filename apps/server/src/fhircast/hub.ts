// The websocket side of the FHIRcast hub (/ws/fhircast/{endpoint}): the subscribers connected to
// this process, the events every process publishes reaching them by broadcast, their
// acknowledgements, and SyncError when one of them does not follow.
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Logger } from '../platform/logger.js';
import type { EndpointClaims, EndpointTokens } from './endpoints.js';
import { SYNC_ERROR, type FhircastEvent } from './events.js';
import type { FhircastStore } from './store.js';

/** Broadcast kinds (every process hears them; only the one holding a socket acts). */
const EVENT = 'fhircast';
const SYNC = 'fhircast-sync';
const RESUBSCRIBE = 'fhircast-sub';
const UNSUBSCRIBE = 'fhircast-unsub';

/** PostgreSQL notifications carry at most 8000 bytes: larger events travel by row id. */
const MAX_INLINE_BYTES = 6000;
const PING_INTERVAL_MS = 30_000;

interface Subscriber {
  claims: EndpointClaims;
  socket: WebSocket;
  /** Subscribed event names, lower case. */
  events: Set<string>;
  lease?: NodeJS.Timeout;
  /** Events sent and not yet acknowledged: event id → its name and the timer that gives up on it. */
  pending: Map<string, { name: string; timer: NodeJS.Timeout }>;
}

/** The process message bus (subscriptions' Broadcaster: PostgreSQL NOTIFY or Redis), as the hub uses it. */
export interface MessageBus {
  onMessage(handler: (message: Record<string, unknown>) => void): void;
  /** Sends a message to every process, this one included. */
  publish(message: Record<string, unknown>): Promise<void>;
}

export interface FhircastHubDeps {
  tokens: EndpointTokens;
  store: FhircastStore;
  broadcaster: MessageBus;
  logger: Logger;
  /** How long a subscriber has to acknowledge an event before the others get a SyncError. */
  ackTimeoutMs: number;
}

/** A SyncError event (fhircast.org, "SyncError"): which subscriber failed to follow which event. */
export function syncErrorEvent(input: {
  id: string;
  topic: string;
  eventId: string;
  eventName: string;
  subscriber: string;
  reason: string;
}): FhircastEvent {
  return {
    timestamp: new Date().toISOString(),
    id: input.id,
    event: {
      'hub.topic': input.topic,
      'hub.event': SYNC_ERROR,
      context: [
        {
          key: 'operationOutcome',
          resource: {
            resourceType: 'OperationOutcome',
            issue: [
              {
                severity: 'warning',
                code: 'processing',
                diagnostics: `${input.subscriber} could not follow ${input.eventName} ${input.eventId}: ${input.reason}`,
                details: {
                  coding: [
                    { system: 'https://fhircast.org/events/syncerror/eventid', code: input.eventId },
                    { system: 'https://fhircast.org/events/syncerror/event-name', code: input.eventName },
                    { system: 'https://fhircast.org/events/syncerror/subscriber', code: input.subscriber },
                  ],
                },
              },
            ],
          },
        },
      ],
    },
  };
}

export class FhircastHub {
  private readonly subscribers = new Map<string, Subscriber>();
  private readonly sockets = new Set<WebSocket>();
  private readonly alive = new WeakSet<WebSocket>();
  private readonly pinger: NodeJS.Timeout;
  /** Deliveries in the order their broadcasts arrived (a large event is read back first). */
  private delivering = Promise.resolve();

  constructor(private readonly deps: FhircastHubDeps) {
    this.pinger = setInterval(() => this.ping(), PING_INTERVAL_MS);
    this.pinger.unref();
    deps.broadcaster.onMessage((message) => this.onBroadcast(message));
  }

  /** Subscribers connected to this process, on one topic or all (tests, status). */
  connectedCount(topic?: string): number {
    let n = 0;
    for (const s of this.subscribers.values()) {
      if (!topic || s.claims.topic === topic) n++;
    }
    return n;
  }

  private ping(): void {
    for (const socket of this.sockets) {
      if (!this.alive.has(socket)) {
        socket.terminate();
        continue;
      }
      this.alive.delete(socket);
      socket.ping();
    }
  }

  /** A subscriber connects to its channel endpoint: confirm the subscription, or deny it and close. */
  accept(socket: WebSocket, token: string): void {
    this.sockets.add(socket);
    this.alive.add(socket);
    let subscriber: Subscriber | undefined;
    socket.on('pong', () => this.alive.add(socket));
    // Listeners first, synchronously: a message sent right after the upgrade is not lost.
    socket.on('message', (data, isBinary) => {
      if (subscriber && !isBinary) {
        this.onAck(subscriber, data.toString());
      }
    });
    socket.on('close', () => {
      this.sockets.delete(socket);
      if (subscriber) {
        this.drop(subscriber);
      }
    });
    socket.on('error', () => socket.terminate());
    void this.deps.tokens.verify(token).then(
      (claims) => {
        if (socket.readyState !== socket.OPEN) {
          return;
        }
        if (!claims) {
          this.deny(socket, undefined, 'Unknown channel endpoint: subscribe again through POST /fhircast');
          return;
        }
        if (claims.expires <= Date.now()) {
          this.deny(socket, claims, 'The subscription lease has expired: subscribe again');
          return;
        }
        subscriber = this.register(socket, claims);
      },
      (err: unknown) => {
        this.deps.logger.warn({ err }, 'fhircast: could not check a channel endpoint');
        socket.close(1011, 'Could not check the channel endpoint');
      },
    );
  }

  private deny(socket: WebSocket, claims: EndpointClaims | undefined, reason: string): void {
    socket.send(
      JSON.stringify({
        'hub.mode': 'denied',
        ...(claims ? { 'hub.topic': claims.topic, 'hub.events': claims.events.join(',') } : {}),
        'hub.reason': reason,
      }),
    );
    socket.close(1008, reason.slice(0, 120));
  }

  private register(socket: WebSocket, claims: EndpointClaims): Subscriber {
    // The same endpoint connected again (a reconnecting subscriber) replaces its earlier socket.
    const earlier = this.subscribers.get(claims.id);
    if (earlier) {
      this.drop(earlier);
      earlier.socket.close(1000, 'Replaced by a new connection to the same endpoint');
    }
    const subscriber: Subscriber = {
      claims,
      socket,
      events: new Set(claims.events.map((e) => e.toLowerCase())),
      pending: new Map(),
    };
    this.subscribers.set(claims.id, subscriber);
    this.setLease(subscriber, claims.expires);
    socket.send(JSON.stringify(this.confirmation(subscriber)));
    return subscriber;
  }

  private confirmation(subscriber: Subscriber): Record<string, unknown> {
    return {
      'hub.mode': 'subscribe',
      'hub.topic': subscriber.claims.topic,
      'hub.events': subscriber.claims.events.join(','),
      'hub.lease_seconds': Math.max(0, Math.round((subscriber.claims.expires - Date.now()) / 1000)),
    };
  }

  private setLease(subscriber: Subscriber, expires: number): void {
    clearTimeout(subscriber.lease);
    // setTimeout holds at most ~24.8 days; leases are far shorter (at most a day).
    subscriber.lease = setTimeout(
      () => {
        this.drop(subscriber);
        subscriber.socket.close(1000, 'Subscription lease expired');
      },
      Math.max(0, expires - Date.now()),
    );
    subscriber.lease.unref();
  }

  private drop(subscriber: Subscriber): void {
    clearTimeout(subscriber.lease);
    for (const { timer } of subscriber.pending.values()) {
      clearTimeout(timer);
    }
    subscriber.pending.clear();
    if (this.subscribers.get(subscriber.claims.id) === subscriber) {
      this.subscribers.delete(subscriber.claims.id);
    }
  }

  /** An acknowledgement `{ id, status }`: a status outside 2xx counts as not following the event. */
  private onAck(subscriber: Subscriber, text: string): void {
    let message: { id?: unknown; status?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (typeof message.id !== 'string') {
      return;
    }
    const pending = subscriber.pending.get(message.id);
    if (!pending) {
      return;
    }
    clearTimeout(pending.timer);
    subscriber.pending.delete(message.id);
    const status = Number(message.status);
    if (!(status >= 200 && status < 300)) {
      void this.reportSyncError(subscriber, message.id, pending.name, `it answered status ${String(message.status)}`);
    }
  }

  private async reportSyncError(subscriber: Subscriber, eventId: string, eventName: string, reason: string) {
    const c = subscriber.claims;
    await this.deps.broadcaster
      .publish({
        k: SYNC,
        p: c.projectId,
        t: c.topic,
        f: c.id,
        id: randomUUID(),
        ei: eventId.slice(0, 200),
        en: eventName,
        n: (c.name ?? `subscriber ${c.id}`).slice(0, 200),
        why: reason.slice(0, 300),
      })
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'fhircast: could not broadcast a SyncError'));
  }

  /** Sends an event to every subscriber of its topic on every process. */
  async publish(projectId: string, event: FhircastEvent): Promise<void> {
    const inline = JSON.stringify(event);
    const message: Record<string, unknown> = { k: EVENT, p: projectId, t: event.event['hub.topic'] };
    if (Buffer.byteLength(inline) > MAX_INLINE_BYTES) {
      message.r = await this.deps.store.keepEvent(event);
    } else {
      message.ev = event;
    }
    await this.deps.broadcaster.publish(message);
  }

  /** Closes the subscription of an endpoint, wherever its socket is. */
  async unsubscribe(claims: EndpointClaims): Promise<void> {
    await this.deps.broadcaster.publish({ k: UNSUBSCRIBE, i: claims.id, p: claims.projectId });
  }

  /** New events and lease for an endpoint already handed out, wherever its socket is. */
  async resubscribe(claims: EndpointClaims): Promise<void> {
    await this.deps.broadcaster.publish({
      k: RESUBSCRIBE,
      i: claims.id,
      p: claims.projectId,
      e: claims.events,
      x: claims.expires,
    });
  }

  private onBroadcast(message: Record<string, unknown>): void {
    switch (message.k) {
      case EVENT:
        this.delivering = this.delivering
          .then(() => this.deliver(message))
          .catch((err: unknown) => this.deps.logger.warn({ err }, 'fhircast: delivery failed'));
        return;
      case SYNC:
        this.deliverSyncError(message);
        return;
      case RESUBSCRIBE: {
        const subscriber = this.subscribers.get(String(message.i));
        if (subscriber && subscriber.claims.projectId === message.p && Array.isArray(message.e)) {
          subscriber.claims = { ...subscriber.claims, events: message.e.map(String), expires: Number(message.x) };
          subscriber.events = new Set(subscriber.claims.events.map((e) => e.toLowerCase()));
          this.setLease(subscriber, subscriber.claims.expires);
          subscriber.socket.send(JSON.stringify(this.confirmation(subscriber)));
        }
        return;
      }
      case UNSUBSCRIBE: {
        const subscriber = this.subscribers.get(String(message.i));
        if (subscriber && subscriber.claims.projectId === message.p) {
          this.drop(subscriber);
          subscriber.socket.send(
            JSON.stringify({
              'hub.mode': 'unsubscribe',
              'hub.topic': subscriber.claims.topic,
              'hub.events': subscriber.claims.events.join(','),
            }),
          );
          subscriber.socket.close(1000, 'Unsubscribed');
        }
        return;
      }
      default:
    }
  }

  private subscribersOf(projectId: unknown, topic: unknown): Subscriber[] {
    return [...this.subscribers.values()].filter((s) => s.claims.projectId === projectId && s.claims.topic === topic);
  }

  private async deliver(message: Record<string, unknown>): Promise<void> {
    const targets = this.subscribersOf(message.p, message.t);
    if (targets.length === 0) {
      return;
    }
    const event = (
      typeof message.r === 'string' ? await this.deps.store.readEvent(message.r) : message.ev
    ) as FhircastEvent;
    if (!event?.event) {
      return;
    }
    const name = event.event['hub.event'];
    const text = JSON.stringify(event);
    for (const subscriber of targets) {
      if (!subscriber.events.has(name.toLowerCase()) || subscriber.socket.readyState !== subscriber.socket.OPEN) {
        continue;
      }
      const timer = setTimeout(() => {
        subscriber.pending.delete(event.id);
        void this.reportSyncError(
          subscriber,
          event.id,
          name,
          `it did not acknowledge within ${this.deps.ackTimeoutMs} ms`,
        );
      }, this.deps.ackTimeoutMs);
      timer.unref();
      clearTimeout(subscriber.pending.get(event.id)?.timer);
      subscriber.pending.set(event.id, { name, timer });
      subscriber.socket.send(text);
    }
  }

  /** A SyncError reaches every other subscriber of the topic, whatever events they chose. */
  private deliverSyncError(message: Record<string, unknown>): void {
    const targets = this.subscribersOf(message.p, message.t).filter((s) => s.claims.id !== message.f);
    if (targets.length === 0) {
      return;
    }
    const text = JSON.stringify(
      syncErrorEvent({
        id: String(message.id),
        topic: String(message.t),
        eventId: String(message.ei),
        eventName: String(message.en),
        subscriber: String(message.n),
        reason: String(message.why),
      }),
    );
    for (const subscriber of targets) {
      if (subscriber.socket.readyState === subscriber.socket.OPEN) {
        subscriber.socket.send(text);
      }
    }
  }

  close(): void {
    clearInterval(this.pinger);
    for (const subscriber of this.subscribers.values()) {
      this.drop(subscriber);
    }
    for (const socket of this.sockets) {
      socket.close(1001, 'Server shutting down');
    }
    this.sockets.clear();
  }
}
