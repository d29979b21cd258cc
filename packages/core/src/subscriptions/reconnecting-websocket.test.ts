import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReconnectingWebSocket } from './reconnecting-websocket.js';
import { FakeWebSocket } from './fake-websocket.test-util.js';

/** Lets the socket's (async) connect step run. */
async function settle(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

beforeEach(() => {
  FakeWebSocket.reset();
  vi.useFakeTimers();
  // Jitter at its top: each delay is the full backoff step.
  vi.spyOn(Math, 'random').mockReturnValue(1);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

function open(options: ConstructorParameters<typeof ReconnectingWebSocket>[1] = {}): ReconnectingWebSocket {
  return new ReconnectingWebSocket('ws://hearth.test/ws/subscriptions-r4', {
    WebSocket: FakeWebSocket,
    minReconnectDelay: 100,
    maxReconnectDelay: 400,
    ...options,
  });
}

describe('ReconnectingWebSocket', () => {
  it('queues messages sent before the connection opens and sends them in order once it does', async () => {
    const ws = open();
    ws.send('one');
    ws.send('two');
    await settle();
    expect(FakeWebSocket.instances).toHaveLength(1);
    expect(FakeWebSocket.last.url).toBe('ws://hearth.test/ws/subscriptions-r4');
    expect(ws.connected).toBe(false);
    FakeWebSocket.last.open();
    expect(ws.connected).toBe(true);
    expect(FakeWebSocket.last.sent).toEqual(['one', 'two']);
    ws.send('three');
    expect(FakeWebSocket.last.sent).toEqual(['one', 'two', 'three']);
    ws.close();
  });

  it('reconnects after a drop with growing delays (capped), and says the new open is a reconnect', async () => {
    const ws = open();
    const opens: boolean[] = [];
    const closes: (number | undefined)[] = [];
    ws.addEventListener('open', (e) => opens.push(e.reconnect));
    ws.addEventListener('close', (e) => closes.push(e.code));
    await settle();
    FakeWebSocket.last.open();
    expect(opens).toEqual([false]);

    // Each attempt fails too: the waits double from 100 ms up to the cap of 400 ms.
    FakeWebSocket.last.drop(1006);
    for (const delay of [100, 200, 400, 400]) {
      const before = FakeWebSocket.instances.length;
      await vi.advanceTimersByTimeAsync(delay - 1);
      expect(FakeWebSocket.instances).toHaveLength(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(FakeWebSocket.instances).toHaveLength(before + 1);
      FakeWebSocket.last.drop(1006);
    }
    await vi.advanceTimersByTimeAsync(400);
    FakeWebSocket.last.open();
    expect(opens).toEqual([false, true]);
    expect(closes[0]).toBe(1006);

    // A successful open resets the backoff: the next drop waits the first step again.
    const before = FakeWebSocket.instances.length;
    FakeWebSocket.last.drop();
    await vi.advanceTimersByTimeAsync(100);
    expect(FakeWebSocket.instances).toHaveLength(before + 1);
    ws.close();
  });

  it('keeps what is sent while disconnected and delivers it on the new connection', async () => {
    const ws = open();
    await settle();
    FakeWebSocket.last.open();
    FakeWebSocket.last.drop();
    ws.send('while away');
    await vi.advanceTimersByTimeAsync(100);
    FakeWebSocket.last.open();
    expect(FakeWebSocket.last.sent).toEqual(['while away']);
    ws.close();
  });

  it('drops the oldest queued messages beyond maxQueuedMessages', async () => {
    const ws = open({ maxQueuedMessages: 2 });
    ws.send('a');
    ws.send('b');
    ws.send('c');
    await settle();
    FakeWebSocket.last.open();
    expect(FakeWebSocket.last.sent).toEqual(['b', 'c']);
    ws.close();
  });

  it('close() is for good: the socket is closed and never reopened', async () => {
    const ws = open();
    await settle();
    FakeWebSocket.last.open();
    ws.close(1000, 'bye');
    expect(FakeWebSocket.last.closedWith).toEqual({ code: 1000, reason: 'bye' });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(FakeWebSocket.instances).toHaveLength(1);
    expect(ws.connected).toBe(false);
  });

  it('reconnect() drops the connection and opens a new one', async () => {
    const ws = open();
    const messages: string[] = [];
    ws.addEventListener('message', (e) => messages.push(e.data));
    await settle();
    FakeWebSocket.last.open();
    FakeWebSocket.last.receive('first');
    ws.reconnect();
    expect(FakeWebSocket.instances[0].closedWith?.code).toBe(4000);
    await vi.advanceTimersByTimeAsync(100);
    expect(FakeWebSocket.instances).toHaveLength(2);
    FakeWebSocket.last.open();
    FakeWebSocket.last.receive('second');
    // Messages of the old connection that arrive late are still passed on; none are lost.
    expect(messages).toEqual(['first', 'second']);
    ws.close();
  });
});
