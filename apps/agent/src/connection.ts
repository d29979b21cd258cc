// The agent's one outbound websocket to the server (/ws/agent): client-credentials token,
// agent:connect, heartbeats, request/response by callback, and reconnection with backoff after
// any loss (exponential from 0.5 s to 30 s, with jitter).
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { parseAgentMessage, type AgentMessage } from '@hearth/core';
import type { ChannelLogger } from './channels/types.js';

export interface ConnectionOptions {
  baseUrl: string;
  agentId: string;
  clientId: string;
  clientSecret: string;
  version: string;
  heartbeatMs: number;
  log: ChannelLogger;
  /** A request from the server ($push, reload); its answer is sent back with the same callback. */
  onRequest(message: AgentMessage): Promise<AgentMessage | undefined>;
  /** Connected and accepted (true), or lost (false). */
  onStatus(online: boolean): void;
}

interface Pending {
  resolve(message: AgentMessage): void;
  reject(error: Error): void;
}

export class NotConnectedError extends Error {}

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;

export class ServerConnection {
  private socket?: WebSocket;
  private online = false;
  private stopped = false;
  private attempt = 0;
  private token?: { value: string; expiresAt: number };
  private readonly pending = new Map<string, Pending>();
  private heartbeat?: NodeJS.Timeout;
  private reconnectTimer?: NodeJS.Timeout;
  private lastHeard = 0;

  constructor(private readonly options: ConnectionOptions) {}

  get isOnline(): boolean {
    return this.online;
  }

  start(): void {
    this.stopped = false;
    void this.open();
  }

  /** An access token of the agent's client, fetched again a minute before it expires. */
  async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt - 60_000 > Date.now()) {
      return this.token.value;
    }
    const res = await fetch(new URL('oauth2/token', this.options.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: this.options.clientId,
        client_secret: this.options.clientSecret,
      }),
    });
    const json = (await res.json().catch(() => ({}))) as {
      access_token?: string;
      expires_in?: number;
      error_description?: string;
    };
    if (!res.ok || !json.access_token) {
      throw new Error(
        `The server refused the client credentials (${res.status}): ${json.error_description ?? 'no token'}`,
      );
    }
    this.token = { value: json.access_token, expiresAt: Date.now() + (json.expires_in ?? 3600) * 1000 };
    return json.access_token;
  }

  private async open(): Promise<void> {
    if (this.stopped) {
      return;
    }
    let token: string;
    try {
      token = await this.accessToken();
    } catch (err) {
      this.options.log.warn('could not get an access token', { error: (err as Error).message });
      this.scheduleReconnect();
      return;
    }
    const url = new URL('ws/agent', this.options.baseUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url, { maxPayload: 64 << 20 });
    this.socket = socket;
    socket.on('open', () => {
      this.lastHeard = Date.now();
      this.sendRaw(socket, {
        type: 'agent:connect:request',
        accessToken: token,
        agentId: this.options.agentId,
        version: this.options.version,
        callback: `connect-${randomUUID()}`,
      });
    });
    socket.on('message', (data) => this.onMessage(socket, data.toString()));
    socket.on('close', () => this.onClose(socket));
    socket.on('error', (err) => {
      this.options.log.warn('websocket error', { error: err.message });
    });
  }

  private onMessage(socket: WebSocket, text: string): void {
    this.lastHeard = Date.now();
    let message: AgentMessage;
    try {
      message = parseAgentMessage(text);
    } catch (err) {
      this.options.log.warn('unreadable message from the server', { error: (err as Error).message });
      return;
    }
    if (message.type === 'agent:connect:response') {
      this.attempt = 0;
      this.online = true;
      this.startHeartbeat(socket);
      this.options.log.info('connected', { baseUrl: this.options.baseUrl, agentId: this.options.agentId });
      this.options.onStatus(true);
      return;
    }
    if (message.type === 'agent:error' && message.callback?.startsWith('connect-')) {
      this.options.log.error('the server refused the connection', { reason: message.body });
      return;
    }
    if (
      message.type === 'agent:transmit:request' ||
      message.type === 'agent:reloadconfig:request' ||
      message.type === 'agent:heartbeat:request'
    ) {
      void this.answer(socket, message);
      return;
    }
    const pending = message.callback ? this.pending.get(message.callback) : undefined;
    if (pending && message.callback) {
      this.pending.delete(message.callback);
      pending.resolve(message);
    }
  }

  private async answer(socket: WebSocket, message: AgentMessage): Promise<void> {
    if (message.type === 'agent:heartbeat:request') {
      this.sendRaw(socket, {
        type: 'agent:heartbeat:response',
        version: this.options.version,
        callback: message.callback,
      });
      return;
    }
    try {
      const answer = await this.options.onRequest(message);
      if (answer) {
        this.sendRaw(socket, { ...answer, callback: message.callback } as AgentMessage);
      }
    } catch (err) {
      this.sendRaw(socket, { type: 'agent:error', body: (err as Error).message, callback: message.callback });
    }
  }

  private startHeartbeat(socket: WebSocket): void {
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastHeard > this.options.heartbeatMs * 3) {
        // Nothing heard for three beats: the connection is dead even if TCP has not noticed.
        this.options.log.warn('no answer from the server; reconnecting');
        socket.terminate();
        return;
      }
      this.sendRaw(socket, { type: 'agent:heartbeat:request', callback: `hb-${randomUUID()}` });
    }, this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  private onClose(socket: WebSocket): void {
    if (this.socket !== socket) {
      return;
    }
    this.socket = undefined;
    clearInterval(this.heartbeat);
    const wasOnline = this.online;
    this.online = false;
    for (const [callback, pending] of this.pending) {
      this.pending.delete(callback);
      pending.reject(new NotConnectedError('The connection to the server was lost'));
    }
    if (wasOnline) {
      this.options.log.warn('disconnected from the server');
      this.options.onStatus(false);
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) {
      return;
    }
    const base = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** this.attempt);
    this.attempt++;
    const delay = base / 2 + Math.random() * (base / 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.open();
    }, delay);
  }

  /** Sends a request and resolves with the server's message of the same callback. */
  request(message: AgentMessage): Promise<AgentMessage> {
    const socket = this.socket;
    if (!socket || !this.online) {
      return Promise.reject(new NotConnectedError('Not connected to the server'));
    }
    const callback = message.callback ?? randomUUID();
    return new Promise((resolve, reject) => {
      this.pending.set(callback, { resolve, reject });
      this.sendRaw(socket, { ...message, callback } as AgentMessage);
    });
  }

  /** Sends without waiting for an answer (dropped when not connected). */
  send(message: AgentMessage): void {
    if (this.socket && this.online) {
      this.sendRaw(this.socket, message);
    }
  }

  private sendRaw(socket: WebSocket, message: AgentMessage): void {
    if (socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(message));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.heartbeat);
    const socket = this.socket;
    if (socket) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close(1000, 'Agent stopping');
        setTimeout(() => {
          socket.terminate();
          resolve();
        }, 2000).unref();
      });
    }
  }
}
