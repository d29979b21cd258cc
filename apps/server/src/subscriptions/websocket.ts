import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { WebSocket } from 'ws';
import { badRequest, type OperationOutcome, type Resource } from '@hearth/core';
import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import type { Repository } from '../storage/repository.js';
import type { MemberRepositories } from '../jobs/actor.js';
import { setSettingOnce } from '../storage/settings.js';
import { parseSubscription } from './model.js';
import { notificationId } from './notification-id.js';
import type { WebsocketPresence } from './presence.js';

const SECRET_SETTING = 'subscriptionBindingSecret';

/**
 * Tokens that bind a websocket to one subscription ($get-ws-binding-token): the subscription,
 * project and expiry, signed with HMAC-SHA256 under a secret every process shares (kept in the
 * database), so a socket may bind on any process, whichever one issued the token.
 */
export class BindingTokens {
  private secret?: Promise<Buffer>;

  constructor(private readonly pool: Pool) {}

  private key(): Promise<Buffer> {
    this.secret ??= setSettingOnce(this.pool, SECRET_SETTING, randomBytes(32).toString('base64')).then((s) =>
      Buffer.from(s, 'base64'),
    );
    return this.secret;
  }

  async issue(
    subscriptionId: string,
    projectId: string,
    ttlSeconds: number,
  ): Promise<{ token: string; expiration: Date }> {
    const expiration = new Date(Date.now() + ttlSeconds * 1000);
    const payload = Buffer.from(
      JSON.stringify({ s: subscriptionId, p: projectId, e: Math.floor(expiration.getTime() / 1000) }),
    ).toString('base64url');
    const sig = createHmac('sha256', await this.key())
      .update(payload)
      .digest('base64url');
    return { token: `${payload}.${sig}`, expiration };
  }

  async verify(token: unknown): Promise<{ subscriptionId: string; projectId: string } | undefined> {
    if (typeof token !== 'string' || token.length > 2000) {
      return undefined;
    }
    const [payload, sig] = token.split('.');
    if (!payload || !sig) {
      return undefined;
    }
    const expected = createHmac('sha256', await this.key())
      .update(payload)
      .digest();
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return undefined;
    }
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
        s?: unknown;
        p?: unknown;
        e?: unknown;
      };
      if (typeof claims.s !== 'string' || typeof claims.p !== 'string' || typeof claims.e !== 'number') {
        return undefined;
      }
      if (claims.e * 1000 < Date.now()) {
        return undefined;
      }
      return { subscriptionId: claims.s, projectId: claims.p };
    } catch {
      return undefined;
    }
  }
}

export interface WebsocketHubDeps {
  tokens: BindingTokens;
  systemRepo: (projectId?: string) => Repository;
  /** Reads as a subscription's author when their policy hides fields (the broadcast names them). */
  members: MemberRepositories;
  fhirBase: string;
  logger: Logger;
  /** Records who is connected (the bound subscriptions' authors), for whoever must know (messaging). */
  presence?: WebsocketPresence;
}

/** A subscription-notification Bundle (the R4 Backport IG shape the spec's platform sends). */
function notificationBundle(
  subscriptionId: string,
  type: 'handshake' | 'event-notification' | 'heartbeat',
  event?: { number: number; resource: Resource; fullUrl: string; deleted: boolean; id: string },
): Resource {
  const timestamp = new Date().toISOString();
  const status: Resource = {
    resourceType: 'SubscriptionStatus',
    status: 'active',
    type,
    subscription: { reference: `Subscription/${subscriptionId}` },
  };
  const entry: unknown[] = [{ resource: status }];
  if (event) {
    status.notificationEvent = [
      {
        eventNumber: String(event.number),
        timestamp,
        focus: { reference: `${event.resource.resourceType}/${event.resource.id}` },
      },
    ];
    entry.push({
      fullUrl: event.fullUrl,
      resource: event.resource,
      ...(event.deleted
        ? { request: { method: 'DELETE', url: `${event.resource.resourceType}/${event.resource.id}` } }
        : {}),
    });
  }
  // An event's Bundle is named like its rest-hook (notification-id.ts), so a client that
  // hears one change on two sockets, or again after a crash, can tell.
  return { resourceType: 'Bundle', id: event?.id ?? randomUUID(), type: 'history', timestamp, entry };
}

function errorMessage(text: string): string {
  const outcome: OperationOutcome = badRequest(text);
  return JSON.stringify({ type: 'error', payload: outcome });
}

/** How often sockets are pinged (dead peers are dropped after one missed pong). */
export const PING_INTERVAL_MS = 30_000;

/**
 * The websocket side of subscriptions (/ws/subscriptions-r4): a client sends
 * `{ type: 'bind-with-token', payload: { token } }` and from then on receives a
 * subscription-notification Bundle for every change its subscription fires on, whichever server
 * process evaluated it (they reach this one by broadcast). `unbind-from-token` and `ping` too.
 */
export class WebsocketHub {
  private readonly bound = new Map<string, Set<WebSocket>>();
  private readonly counters = new Map<string, number>();
  private readonly alive = new WeakSet<WebSocket>();
  private readonly sockets = new Set<WebSocket>();
  /** Per socket: its bound subscriptions' presence keys (presence.ts). */
  private readonly present = new WeakMap<WebSocket, Map<string, string>>();
  private readonly pinger: NodeJS.Timeout;

  constructor(private readonly deps: WebsocketHubDeps) {
    this.pinger = setInterval(() => this.ping(), PING_INTERVAL_MS);
    this.pinger.unref();
  }

  /** Sockets bound to a subscription in this process (tests, status). */
  boundCount(subscriptionId?: string): number {
    if (subscriptionId) {
      return this.bound.get(subscriptionId)?.size ?? 0;
    }
    let n = 0;
    for (const set of this.bound.values()) {
      n += set.size;
    }
    return n;
  }

  private ping(): void {
    this.deps.presence?.refresh();
    for (const socket of this.sockets) {
      if (!this.alive.has(socket)) {
        socket.terminate();
        continue;
      }
      this.alive.delete(socket);
      socket.ping();
    }
  }

  accept(socket: WebSocket): void {
    this.sockets.add(socket);
    this.alive.add(socket);
    const mine = new Set<string>();
    socket.on('pong', () => this.alive.add(socket));
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        socket.send(errorMessage('Send JSON text messages'));
        return;
      }
      void this.onMessage(socket, mine, data.toString()).catch((err: unknown) => {
        this.deps.logger.warn({ err }, 'websocket message failed');
        socket.send(errorMessage('The message could not be handled'));
      });
    });
    socket.on('close', () => {
      this.sockets.delete(socket);
      for (const id of mine) {
        this.unbind(id, socket);
      }
      mine.clear();
    });
    socket.on('error', () => socket.terminate());
  }

  private unbind(subscriptionId: string, socket: WebSocket): void {
    const keys = this.present.get(socket);
    const key = keys?.get(subscriptionId);
    if (key !== undefined) {
      keys?.delete(subscriptionId);
      this.deps.presence?.leave(key);
    }
    const set = this.bound.get(subscriptionId);
    set?.delete(socket);
    if (set?.size === 0) {
      this.bound.delete(subscriptionId);
    }
  }

  private async onMessage(socket: WebSocket, mine: Set<string>, text: string): Promise<void> {
    let message: { type?: unknown; payload?: { token?: unknown } };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      socket.send(errorMessage('Messages must be JSON'));
      return;
    }
    switch (message.type) {
      case 'ping':
        socket.send(JSON.stringify({ type: 'pong' }));
        return;
      case 'bind-with-token': {
        const claims = await this.deps.tokens.verify(message.payload?.token);
        if (!claims) {
          socket.send(
            errorMessage(
              'Invalid or expired binding token; get a new one from Subscription/{id}/$get-ws-binding-token',
            ),
          );
          return;
        }
        let active = false;
        let author: string | undefined;
        try {
          const stored = await this.deps
            .systemRepo(claims.projectId)
            .readResource('Subscription', claims.subscriptionId);
          const sub = parseSubscription(stored.resource);
          active = sub?.channel === 'websocket' && sub.projectId === claims.projectId;
          author = stored.resource.meta?.author?.reference;
        } catch {
          active = false;
        }
        if (!active) {
          socket.send(errorMessage(`Subscription/${claims.subscriptionId} is not an active websocket subscription`));
          return;
        }
        const set = this.bound.get(claims.subscriptionId) ?? new Set<WebSocket>();
        set.add(socket);
        this.bound.set(claims.subscriptionId, set);
        if (!mine.has(claims.subscriptionId) && author && this.deps.presence && socket.readyState === socket.OPEN) {
          const keys = this.present.get(socket) ?? new Map<string, string>();
          keys.set(claims.subscriptionId, this.deps.presence.join(claims.projectId, author));
          this.present.set(socket, keys);
        }
        mine.add(claims.subscriptionId);
        socket.send(JSON.stringify(notificationBundle(claims.subscriptionId, 'handshake')));
        return;
      }
      case 'unbind-from-token': {
        const claims = await this.deps.tokens.verify(message.payload?.token);
        if (claims) {
          this.unbind(claims.subscriptionId, socket);
          mine.delete(claims.subscriptionId);
        }
        return;
      }
      default:
        socket.send(errorMessage(`Unknown message type ${String(message.type)}`));
    }
  }

  /** A broadcast from the evaluator of any process: notify the sockets bound here. */
  async onBroadcast(message: Record<string, unknown>): Promise<void> {
    if (message.k !== 'ws' || typeof message.s !== 'string') {
      return;
    }
    const sockets = this.bound.get(message.s);
    if (!sockets || sockets.size === 0) {
      return;
    }
    const [projectId, type, id, versionId] = [message.p, message.t, message.i, message.v].map(String);
    let resource: Resource;
    try {
      const repo =
        typeof message.a === 'string'
          ? await this.deps.members.forProfile(projectId, message.a)
          : this.deps.systemRepo(projectId);
      resource = (await repo.readVersion(type, id, versionId)).resource;
    } catch (err) {
      this.deps.logger.warn({ err, subscription: message.s }, 'websocket notification: version not readable');
      return;
    }
    const n = (this.counters.get(message.s) ?? 0) + 1;
    this.counters.set(message.s, n);
    const text = JSON.stringify(
      notificationBundle(message.s, 'event-notification', {
        number: n,
        resource,
        fullUrl: `${this.deps.fhirBase}${type}/${id}`,
        deleted: message.x === 'delete',
        id: notificationId({
          subscriptionId: message.s,
          resourceType: type,
          id,
          versionId,
          interaction: String(message.x),
          resendId: typeof message.r === 'string' ? message.r : undefined,
        }),
      }),
    );
    for (const socket of sockets) {
      if (socket.readyState === socket.OPEN) {
        socket.send(text);
      }
    }
  }

  close(): void {
    clearInterval(this.pinger);
    void this.deps.presence?.close();
    for (const socket of this.sockets) {
      socket.close(1001, 'Server shutting down');
    }
    this.sockets.clear();
    this.bound.clear();
  }
}
