/**
 * A websocket that reconnects by itself: after a drop it waits (exponential backoff with jitter)
 * and opens a new connection to the same URL, queuing messages sent while it is away.
 * Isomorphic: the browser's WebSocket, Node's global one (Node 22+), or any implementation
 * of the same interface (the `ws` package) passed in.
 */

/** The part of the standard WebSocket interface used here (browsers, Node 22+, the `ws` package). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onclose: ((event: { code?: number; reason?: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface ReconnectingWebSocketOptions {
  /** The WebSocket implementation; default: the global WebSocket, else the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /** First delay before reconnecting, in ms (default 500). */
  minReconnectDelay?: number;
  /** Longest delay between attempts, in ms (default 30 000). */
  maxReconnectDelay?: number;
  /** Messages kept while disconnected (default 1000; older ones are dropped). */
  maxQueuedMessages?: number;
}

export interface ReconnectingWebSocketEventMap {
  open: { reconnect: boolean };
  close: { code?: number; reason?: string };
  message: { data: string };
  error: { error: unknown };
}

type Listener<T> = (event: T) => void;

const OPEN = 1;

/** Finds a WebSocket implementation: the given one, the global one, or the `ws` package in Node. */
export async function resolveWebSocket(given?: WebSocketConstructor): Promise<WebSocketConstructor> {
  if (given) {
    return given;
  }
  const global = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (global) {
    return global;
  }
  // A computed specifier: browser bundlers leave it alone (browsers always have a global WebSocket).
  const specifier = ['w', 's'].join('');
  try {
    const mod = (await import(/* @vite-ignore */ specifier)) as {
      default?: WebSocketConstructor;
      WebSocket?: WebSocketConstructor;
    };
    const ctor = mod.WebSocket ?? mod.default;
    if (ctor) {
      return ctor;
    }
  } catch {
    // Fall through to the error below.
  }
  throw new Error('No WebSocket implementation: pass one (e.g. the `ws` package) in the WebSocket option');
}

export class ReconnectingWebSocket {
  readonly url: string;
  private readonly options: Required<Omit<ReconnectingWebSocketOptions, 'WebSocket'>> & {
    WebSocket?: WebSocketConstructor;
  };
  private socket?: WebSocketLike;
  private readonly listeners: {
    [K in keyof ReconnectingWebSocketEventMap]: Set<Listener<ReconnectingWebSocketEventMap[K]>>;
  } = {
    open: new Set(),
    close: new Set(),
    message: new Set(),
    error: new Set(),
  };
  private queue: string[] = [];
  private attempts = 0;
  private opened = false;
  private closed = false;
  private timer?: ReturnType<typeof setTimeout>;

  constructor(url: string, options: ReconnectingWebSocketOptions = {}) {
    this.url = url;
    this.options = {
      minReconnectDelay: 500,
      maxReconnectDelay: 30_000,
      maxQueuedMessages: 1000,
      ...options,
    };
    void this.connect();
  }

  addEventListener<K extends keyof ReconnectingWebSocketEventMap>(
    type: K,
    listener: Listener<ReconnectingWebSocketEventMap[K]>,
  ): void {
    this.listeners[type].add(listener);
  }

  removeEventListener<K extends keyof ReconnectingWebSocketEventMap>(
    type: K,
    listener: Listener<ReconnectingWebSocketEventMap[K]>,
  ): void {
    this.listeners[type].delete(listener);
  }

  private emit<K extends keyof ReconnectingWebSocketEventMap>(type: K, event: ReconnectingWebSocketEventMap[K]): void {
    for (const listener of [...this.listeners[type]]) {
      try {
        listener(event);
      } catch (error) {
        if (type !== 'error') {
          this.emit('error', { error });
        }
      }
    }
  }

  /** True while a connection is open. */
  get connected(): boolean {
    return this.socket?.readyState === OPEN;
  }

  private async connect(): Promise<void> {
    if (this.closed) {
      return;
    }
    let Ctor: WebSocketConstructor;
    try {
      Ctor = await resolveWebSocket(this.options.WebSocket);
    } catch (error) {
      this.emit('error', { error });
      return;
    }
    if (this.closed) {
      return;
    }
    const socket = new Ctor(this.url);
    this.socket = socket;
    socket.onopen = () => {
      const reconnect = this.opened;
      this.opened = true;
      this.attempts = 0;
      const pending = this.queue;
      this.queue = [];
      for (const data of pending) {
        socket.send(data);
      }
      this.emit('open', { reconnect });
    };
    socket.onmessage = (event) => {
      const data = event.data;
      this.emit('message', { data: typeof data === 'string' ? data : String(data) });
    };
    socket.onerror = (error) => {
      this.emit('error', { error });
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) {
        return;
      }
      this.socket = undefined;
      this.emit('close', { code: event?.code, reason: event?.reason });
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) {
      return;
    }
    const base = Math.min(this.options.maxReconnectDelay, this.options.minReconnectDelay * 2 ** this.attempts);
    const delay = base / 2 + (Math.random() * base) / 2;
    this.attempts++;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, delay);
  }

  /** Sends now when connected, else when the connection is back. */
  send(data: string): void {
    if (this.socket?.readyState === OPEN) {
      this.socket.send(data);
      return;
    }
    this.queue.push(data);
    if (this.queue.length > this.options.maxQueuedMessages) {
      this.queue.shift();
    }
  }

  /** Closes for good: no reconnect. */
  close(code = 1000, reason = 'closed'): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(code, reason);
    this.queue = [];
  }

  /** Drops the current connection as if the network failed (it reconnects); for tests and network changes. */
  reconnect(): void {
    const socket = this.socket;
    if (socket) {
      socket.close(4000, 'reconnect');
    } else {
      void this.connect();
    }
  }
}
