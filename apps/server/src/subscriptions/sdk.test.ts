// The SDK's SubscriptionManager and ReconnectingWebSocket against a real server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  HearthClient,
  MemoryStorage,
  SubscriptionManager,
  type Communication,
  type Resource,
  type WebSocketConstructor,
} from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { waitFor } from '../bots/testing.js';

let t: TestApp;
let hearth: HearthClient;
let manager: SubscriptionManager;

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  hearth = new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
  hearth.setAccessToken(t.token);
  manager = new SubscriptionManager(hearth, {
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    minReconnectDelay: 50,
    maxReconnectDelay: 500,
  });
});
afterAll(async () => {
  manager?.close();
  await t?.close();
});

function serverSockets(): Set<{ terminate(): void }> {
  return (t.services.automation.subscriptions.hub as unknown as { sockets: Set<{ terminate(): void }> }).sockets;
}

describe('SubscriptionManager', () => {
  it('subscribes to a criteria string and receives typed notifications', async () => {
    const emitter = manager.subscribe('Communication?status=in-progress');
    const connected = await emitter.once('connect');
    expect(connected.subscriptionId).toBeTruthy();
    const stored = await hearth.readResource('Subscription', connected.subscriptionId);
    expect(stored).toMatchObject({ criteria: 'Communication?status=in-progress', channel: { type: 'websocket' } });

    const next = emitter.once('message');
    await hearth.createResource<Communication>({ resourceType: 'Communication', status: 'completed' });
    const sent = await hearth.createResource<Communication>({ resourceType: 'Communication', status: 'in-progress' });
    const event = await next;
    expect(event.resource).toMatchObject({ resourceType: 'Communication', id: sent.id });
    expect(event.deleted).toBe(false);
    expect(event.bundle.type).toBe('history');
  });

  it('reconnects and binds again after the connection drops (client or server side)', async () => {
    const emitter = manager.subscribe('Communication?status=on-hold');
    const { subscriptionId } = await emitter.once('connect');
    const received: Resource[] = [];
    emitter.on('message', (e) => e.resource && received.push(e.resource));

    // Dropped by the client's network.
    const disconnected = emitter.once('disconnect');
    const reconnected = emitter.once('connect');
    manager.getWebSocket()?.reconnect();
    await disconnected;
    await reconnected;
    const first = await hearth.createResource<Communication>({ resourceType: 'Communication', status: 'on-hold' });
    await waitFor(() => (received.some((r) => r.id === first.id) ? true : undefined));

    // Dropped by the server.
    const again = emitter.once('connect');
    for (const socket of serverSockets()) {
      socket.terminate();
    }
    await again;
    expect(t.services.automation.subscriptions.hub.boundCount(subscriptionId)).toBe(1);
    const second = await hearth.createResource<Communication>({ resourceType: 'Communication', status: 'on-hold' });
    await waitFor(() => (received.some((r) => r.id === second.id) ? true : undefined));
  });

  it('unsubscribing unbinds and removes the Subscription', async () => {
    const emitter = manager.subscribe('Communication?status=stopped');
    const { subscriptionId } = await emitter.once('connect');
    await manager.unsubscribe('Communication?status=stopped');
    await waitFor(() => (t.services.automation.subscriptions.hub.boundCount(subscriptionId) === 0 ? true : undefined));
    await expect(hearth.readResource('Subscription', subscriptionId)).rejects.toThrow();
  });
});
