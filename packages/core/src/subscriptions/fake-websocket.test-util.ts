// A scripted WebSocket for the SDK's subscription tests: each `new` is recorded, and the test opens,
// answers and drops connections by hand.
import type { WebSocketLike } from './reconnecting-websocket.js';

export class FakeWebSocket implements WebSocketLike {
  static instances: FakeWebSocket[] = [];

  readyState = 0;
  readonly sent: string[] = [];
  closedWith?: { code?: number; reason?: string };
  onopen: ((event: unknown) => void) | null = null;
  onclose: ((event: { code?: number; reason?: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;

  constructor(readonly url: string) {
    FakeWebSocket.instances.push(this);
  }

  static reset(): void {
    FakeWebSocket.instances = [];
  }

  /** The most recent connection. */
  static get last(): FakeWebSocket {
    const socket = FakeWebSocket.instances.at(-1);
    if (!socket) {
      throw new Error('No websocket was opened');
    }
    return socket;
  }

  send(data: string): void {
    if (this.readyState !== 1) {
      throw new Error('send() on a socket that is not open');
    }
    this.sent.push(data);
  }

  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
    this.drop(code, reason);
  }

  /** The connection opens. */
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }

  /** The server sends a message. */
  receive(message: unknown): void {
    this.onmessage?.({ data: typeof message === 'string' ? message : JSON.stringify(message) });
  }

  /** The connection is lost (network, server restart). */
  drop(code = 1006, reason = ''): void {
    if (this.readyState === 3) {
      return;
    }
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }

  /** Messages sent on this connection, parsed. */
  messages(): { type?: string; payload?: { token?: string } }[] {
    return this.sent.map((s) => JSON.parse(s) as { type?: string; payload?: { token?: string } });
  }
}
