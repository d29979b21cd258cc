/**
 * SubscriptionManager: FHIR R4 websocket subscriptions from a client. `subscribe(criteria)` creates
 * a Subscription with a websocket channel, asks the server for a binding token
 * (Subscription/{id}/$get-ws-binding-token), and binds the shared websocket to it; notifications
 * (subscription-notification Bundles) arrive as typed events. After a dropped connection the socket
 * reconnects and every subscription is bound again with a fresh token.
 */
import type { Bundle, Resource, Subscription } from '../fhir-types.js';
import type { HearthClient } from '../client/client.js';
import { ReconnectingWebSocket, type ReconnectingWebSocketOptions } from './reconnecting-websocket.js';

/** The client calls the manager makes. */
export type SubscriptionManagerClient = Pick<
  HearthClient,
  'createResource' | 'deleteResource' | 'get' | 'fhirUrl' | 'getBaseUrl'
>;

export interface SubscriptionEventMap<T extends Resource = Resource> {
  /** The websocket is bound to the subscription (after each (re)bind). */
  connect: { subscriptionId: string };
  /** A notification: the Bundle, and the resource it is about (typed by the criteria's resource type). */
  message: { bundle: Bundle; resource?: T; subscriptionId: string; deleted: boolean };
  /** The connection dropped; it reconnects and binds again by itself. */
  disconnect: { subscriptionId: string };
  /** Something failed (binding, a server error message). */
  error: { error: Error };
}

type Listener<T> = (event: T) => void;

/** The events of one subscription; `T` is the resource type its criteria searches. */
export class SubscriptionEmitter<T extends Resource = Resource> {
  readonly criteria: string;
  private readonly listeners = new Map<keyof SubscriptionEventMap<T>, Set<Listener<never>>>();

  constructor(criteria: string) {
    this.criteria = criteria;
  }

  on<K extends keyof SubscriptionEventMap<T>>(type: K, listener: Listener<SubscriptionEventMap<T>[K]>): this {
    const set = this.listeners.get(type) ?? new Set();
    set.add(listener as Listener<never>);
    this.listeners.set(type, set);
    return this;
  }

  off<K extends keyof SubscriptionEventMap<T>>(type: K, listener: Listener<SubscriptionEventMap<T>[K]>): this {
    this.listeners.get(type)?.delete(listener as Listener<never>);
    return this;
  }

  /** Resolves with the next event of a type. */
  once<K extends keyof SubscriptionEventMap<T>>(type: K): Promise<SubscriptionEventMap<T>[K]> {
    return new Promise((resolve) => {
      const listener = (event: SubscriptionEventMap<T>[K]): void => {
        this.off(type, listener);
        resolve(event);
      };
      this.on(type, listener);
    });
  }

  emit<K extends keyof SubscriptionEventMap<T>>(type: K, event: SubscriptionEventMap<T>[K]): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) {
      (listener as Listener<SubscriptionEventMap<T>[K]>)(event);
    }
  }
}

export interface SubscriptionManagerOptions extends ReconnectingWebSocketOptions {
  /** The websocket URL; default: the one the server names with the binding token. */
  websocketUrl?: string;
}

interface Entry {
  emitter: SubscriptionEmitter;
  subscriptionId?: string;
  token?: string;
  /** The subscribe() calls sharing this criteria. */
  refs: number;
  ready: Promise<void>;
  /** Ids of the latest notifications, oldest first, to drop one heard again. */
  seen: Set<string>;
}

/** How many notification ids each subscription remembers. */
const SEEN_IDS = 1000;

interface BindingParameters {
  parameter?: { name: string; valueString?: string; valueUrl?: string }[];
}

export class SubscriptionManager {
  private readonly client: SubscriptionManagerClient;
  private readonly options: SubscriptionManagerOptions;
  private socket?: ReconnectingWebSocket;
  private readonly entries = new Map<string, Entry>();
  private readonly bySubscription = new Map<string, Entry>();

  constructor(client: SubscriptionManagerClient, options: SubscriptionManagerOptions = {}) {
    this.client = client;
    this.options = options;
  }

  /**
   * Subscribes to a criteria string ("Observation?code=...") and returns its event emitter; name
   * the resource type to have its notifications typed: `subscribe<Observation>('Observation?...')`.
   */
  subscribe<T extends Resource = Resource>(
    criteria: string,
    extension?: Resource['extension'],
  ): SubscriptionEmitter<T> {
    const existing = this.entries.get(criteria);
    if (existing) {
      existing.refs++;
      return existing.emitter as unknown as SubscriptionEmitter<T>;
    }
    const emitter = new SubscriptionEmitter(criteria);
    const entry: Entry = { emitter, refs: 1, ready: Promise.resolve(), seen: new Set() };
    this.entries.set(criteria, entry);
    entry.ready = this.start(entry, extension).catch((error: unknown) => {
      emitter.emit('error', { error: error instanceof Error ? error : new Error(String(error)) });
    });
    return emitter as unknown as SubscriptionEmitter<T>;
  }

  /** Resolves once the subscription of a criteria is created and its bind request sent. */
  async ready(criteria: string): Promise<void> {
    await this.entries.get(criteria)?.ready;
  }

  private async start(entry: Entry, extension?: Resource['extension']): Promise<void> {
    const created = await this.client.createResource({
      resourceType: 'Subscription',
      status: 'active',
      reason: `Websocket subscription to ${entry.emitter.criteria}`,
      criteria: entry.emitter.criteria,
      channel: { type: 'websocket' },
      ...(extension ? { extension: extension as Subscription['extension'] } : {}),
    } satisfies Subscription);
    const id = created.id as string;
    entry.subscriptionId = id;
    this.bySubscription.set(id, entry);
    const { token, url } = await this.bindingToken(id);
    entry.token = token;
    this.ensureSocket(url).send(JSON.stringify({ type: 'bind-with-token', payload: { token } }));
  }

  private async bindingToken(subscriptionId: string): Promise<{ token: string; url?: string }> {
    const params = await this.client.get<BindingParameters>(
      this.client.fhirUrl('Subscription', subscriptionId, '$get-ws-binding-token'),
    );
    const token = params.parameter?.find((p) => p.name === 'token')?.valueString;
    if (!token) {
      throw new Error(`The server gave no binding token for Subscription/${subscriptionId}`);
    }
    return { token, url: params.parameter?.find((p) => p.name === 'websocket-url')?.valueUrl };
  }

  private ensureSocket(url?: string): ReconnectingWebSocket {
    if (this.socket) {
      return this.socket;
    }
    const wsUrl = this.options.websocketUrl ?? url ?? defaultWebsocketUrl(this.client.getBaseUrl());
    const socket = new ReconnectingWebSocket(wsUrl, this.options);
    socket.addEventListener('message', ({ data }) => this.onMessage(data));
    socket.addEventListener('open', ({ reconnect }) => {
      if (reconnect) {
        void this.rebindAll();
      }
    });
    socket.addEventListener('close', () => {
      for (const entry of this.entries.values()) {
        if (entry.subscriptionId) {
          entry.emitter.emit('disconnect', { subscriptionId: entry.subscriptionId });
        }
      }
    });
    this.socket = socket;
    return socket;
  }

  /** After a reconnect: fresh tokens (the old ones may have expired), bound again. */
  private async rebindAll(): Promise<void> {
    for (const entry of this.entries.values()) {
      if (!entry.subscriptionId) {
        continue;
      }
      try {
        const { token } = await this.bindingToken(entry.subscriptionId);
        entry.token = token;
        this.socket?.send(JSON.stringify({ type: 'bind-with-token', payload: { token } }));
      } catch (error) {
        entry.emitter.emit('error', { error: error instanceof Error ? error : new Error(String(error)) });
      }
    }
  }

  private onMessage(data: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return;
    }
    if (message.type === 'error') {
      const payload = message.payload as { issue?: { details?: { text?: string } }[] } | undefined;
      const error = new Error(payload?.issue?.[0]?.details?.text ?? 'Websocket error');
      for (const entry of this.entries.values()) {
        entry.emitter.emit('error', { error });
      }
      return;
    }
    if (message.resourceType !== 'Bundle') {
      return;
    }
    const bundle = message as unknown as Bundle;
    const status = bundle.entry?.[0]?.resource as
      (Resource & { type?: string; subscription?: { reference?: string } }) | undefined;
    const subscriptionId = status?.subscription?.reference?.replace(/^Subscription\//, '');
    const entry = subscriptionId ? this.bySubscription.get(subscriptionId) : undefined;
    if (!entry || !subscriptionId) {
      return;
    }
    if (status?.type === 'handshake') {
      entry.emitter.emit('connect', { subscriptionId });
    } else if (status?.type === 'event-notification') {
      // Delivery is at least once: a notification sent again (the server names each by its
      // subscription, version and interaction) is dropped here, not emitted twice.
      if (bundle.id) {
        if (entry.seen.has(bundle.id)) {
          return;
        }
        entry.seen.add(bundle.id);
        if (entry.seen.size > SEEN_IDS) {
          entry.seen.delete(entry.seen.values().next().value as string);
        }
      }
      const focus = bundle.entry?.[1];
      entry.emitter.emit('message', {
        bundle,
        resource: focus?.resource as Resource | undefined,
        subscriptionId,
        deleted: (focus as { request?: { method?: string } } | undefined)?.request?.method === 'DELETE',
      });
    }
  }

  /** Stops one criteria's subscription (when its last subscriber leaves): unbinds and deletes it. */
  async unsubscribe(criteria: string): Promise<void> {
    const entry = this.entries.get(criteria);
    if (!entry) {
      return;
    }
    entry.refs--;
    if (entry.refs > 0) {
      return;
    }
    this.entries.delete(criteria);
    await entry.ready;
    if (entry.subscriptionId) {
      this.bySubscription.delete(entry.subscriptionId);
      if (entry.token) {
        this.socket?.send(JSON.stringify({ type: 'unbind-from-token', payload: { token: entry.token } }));
      }
      await this.client.deleteResource('Subscription', entry.subscriptionId).catch(() => undefined);
    }
    if (this.entries.size === 0) {
      this.socket?.close();
      this.socket = undefined;
    }
  }

  /** The criteria subscribed to. */
  getCriteria(): string[] {
    return [...this.entries.keys()];
  }

  /** The underlying websocket (undefined before the first subscription). */
  getWebSocket(): ReconnectingWebSocket | undefined {
    return this.socket;
  }

  /** Closes the websocket and forgets every subscription (the Subscription resources stay). */
  close(): void {
    this.socket?.close();
    this.socket = undefined;
    this.entries.clear();
    this.bySubscription.clear();
  }
}

/** ws(s)://host/ws/subscriptions-r4 for a server base URL. */
export function defaultWebsocketUrl(baseUrl: string): string {
  const url = new URL('ws/subscriptions-r4', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
