import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Bundle, Observation, Resource } from '../fhir-types.js';
import { SubscriptionManager, type SubscriptionManagerClient } from './manager.js';
import { FakeWebSocket } from './fake-websocket.test-util.js';

/** A client that stores Subscriptions in memory and hands out numbered binding tokens. */
function fakeClient(): SubscriptionManagerClient & {
  created: Resource[];
  deleted: string[];
  tokensIssued: number;
} {
  let next = 0;
  const client = {
    created: [] as Resource[],
    deleted: [] as string[],
    tokensIssued: 0,
    getBaseUrl: () => 'https://hearth.test/',
    fhirUrl: (...parts: string[]) => new URL(`fhir/R4/${parts.join('/')}`, 'https://hearth.test/'),
    createResource: async <T extends Resource>(resource: T): Promise<T> => {
      const stored = { ...resource, id: `sub-${++next}` };
      client.created.push(stored);
      return stored;
    },
    deleteResource: async (_type: string, id: string): Promise<void> => {
      client.deleted.push(id);
    },
    get: async <T>(url: URL | string): Promise<T> => {
      const id = /Subscription\/([^/]+)\/\$get-ws-binding-token/.exec(String(url))?.[1];
      client.tokensIssued++;
      return {
        resourceType: 'Parameters',
        parameter: [
          { name: 'token', valueString: `token-${id}-${client.tokensIssued}` },
          { name: 'websocket-url', valueUrl: 'wss://hearth.test/ws/subscriptions-r4' },
        ],
      } as T;
    },
  };
  return client as unknown as SubscriptionManagerClient & typeof client;
}

function statusEntry(subscriptionId: string, type: string): { resource: Resource } {
  return {
    resource: {
      resourceType: 'SubscriptionStatus',
      status: 'active',
      type,
      subscription: { reference: `Subscription/${subscriptionId}` },
    } as Resource,
  };
}

function notification(subscriptionId: string, resource: Resource, deleted = false, id?: string): Bundle {
  return {
    resourceType: 'Bundle',
    ...(id ? { id } : {}),
    type: 'history',
    entry: [
      statusEntry(subscriptionId, 'event-notification'),
      {
        fullUrl: `https://hearth.test/fhir/R4/${resource.resourceType}/${resource.id}`,
        resource,
        ...(deleted ? { request: { method: 'DELETE', url: `${resource.resourceType}/${resource.id}` } } : {}),
      },
    ],
  } as Bundle;
}

/** Lets pending promises and the socket's connect step run. */
async function settle(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

beforeEach(() => {
  FakeWebSocket.reset();
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SubscriptionManager', () => {
  it('creates a websocket Subscription for a criteria, binds with its token, and emits typed events', async () => {
    const client = fakeClient();
    const manager = new SubscriptionManager(client, { WebSocket: FakeWebSocket, minReconnectDelay: 10 });
    const emitter = manager.subscribe<Observation>('Observation?code=8867-4');
    await manager.ready('Observation?code=8867-4');
    await settle();
    expect(client.created).toEqual([
      expect.objectContaining({
        resourceType: 'Subscription',
        status: 'active',
        criteria: 'Observation?code=8867-4',
        channel: { type: 'websocket' },
      }),
    ]);
    const socket = FakeWebSocket.last;
    expect(socket.url).toBe('wss://hearth.test/ws/subscriptions-r4');
    socket.open();
    expect(socket.messages()).toEqual([{ type: 'bind-with-token', payload: { token: 'token-sub-1-1' } }]);

    const connected = emitter.once('connect');
    socket.receive({ resourceType: 'Bundle', type: 'history', entry: [statusEntry('sub-1', 'handshake')] });
    expect(await connected).toEqual({ subscriptionId: 'sub-1' });

    const received: { value?: number; deleted: boolean }[] = [];
    emitter.on('message', (event) => {
      // Typed: event.resource is an Observation.
      received.push({ value: event.resource?.valueQuantity?.value, deleted: event.deleted });
    });
    const obs = { resourceType: 'Observation', id: 'o1', status: 'final', valueQuantity: { value: 72 } } as Observation;
    socket.receive(notification('sub-1', obs));
    socket.receive(notification('sub-1', obs, true));
    // Notifications of another subscription, and malformed messages, are ignored.
    socket.receive(notification('someone-else', obs));
    socket.receive('not json');
    expect(received).toEqual([
      { value: 72, deleted: false },
      { value: 72, deleted: true },
    ]);
    manager.close();
  });

  it('emits a notification heard again (same Bundle id, at-least-once delivery) only once', async () => {
    const manager = new SubscriptionManager(fakeClient(), { WebSocket: FakeWebSocket, minReconnectDelay: 10 });
    const emitter = manager.subscribe<Observation>('Observation?code=8867-4');
    await manager.ready('Observation?code=8867-4');
    await settle();
    const socket = FakeWebSocket.last;
    socket.open();
    const ids: (string | undefined)[] = [];
    emitter.on('message', (event) => ids.push(event.bundle.id));
    const obs = { resourceType: 'Observation', id: 'o1', status: 'final' } as Observation;
    socket.receive(notification('sub-1', obs, false, 'n-1'));
    socket.receive(notification('sub-1', obs, false, 'n-1'));
    socket.receive(notification('sub-1', obs, false, 'n-2'));
    // Without an id (another server), nothing can be told apart: each is emitted.
    socket.receive(notification('sub-1', obs));
    socket.receive(notification('sub-1', obs));
    expect(ids).toEqual(['n-1', 'n-2', undefined, undefined]);
    manager.close();
  });

  it('binds every subscription again with a fresh token after the connection drops', async () => {
    const client = fakeClient();
    const manager = new SubscriptionManager(client, { WebSocket: FakeWebSocket, minReconnectDelay: 10 });
    const patients = manager.subscribe('Patient');
    const encounters = manager.subscribe('Encounter?status=in-progress');
    await Promise.all([manager.ready('Patient'), manager.ready('Encounter?status=in-progress')]);
    await settle();
    expect(FakeWebSocket.instances).toHaveLength(1);
    FakeWebSocket.last.open();
    const disconnects: string[] = [];
    patients.on('disconnect', (e) => disconnects.push(e.subscriptionId));
    encounters.on('disconnect', (e) => disconnects.push(e.subscriptionId));

    FakeWebSocket.last.drop();
    expect(disconnects.sort()).toEqual(['sub-1', 'sub-2']);
    await vi.advanceTimersByTimeAsync(10);
    expect(FakeWebSocket.instances).toHaveLength(2);
    FakeWebSocket.last.open();
    await settle();
    const binds = FakeWebSocket.last.messages().map((m) => m.payload?.token);
    // New tokens (the old ones may have expired), one per subscription.
    expect(binds.sort()).toEqual(['token-sub-1-3', 'token-sub-2-4']);
    manager.close();
  });

  it('shares one Subscription per criteria; the last unsubscribe unbinds and deletes it', async () => {
    const client = fakeClient();
    const manager = new SubscriptionManager(client, { WebSocket: FakeWebSocket });
    const first = manager.subscribe('Communication');
    const second = manager.subscribe('Communication');
    expect(second).toBe(first);
    await manager.ready('Communication');
    await settle();
    FakeWebSocket.last.open();
    expect(client.created).toHaveLength(1);

    await manager.unsubscribe('Communication');
    expect(client.deleted).toEqual([]);
    expect(manager.getCriteria()).toEqual(['Communication']);

    await manager.unsubscribe('Communication');
    expect(client.deleted).toEqual(['sub-1']);
    expect(FakeWebSocket.instances[0].messages().at(-1)).toEqual({
      type: 'unbind-from-token',
      payload: { token: 'token-sub-1-1' },
    });
    // No subscriptions left: the socket is closed for good.
    expect(FakeWebSocket.instances[0].closedWith).toBeDefined();
    expect(manager.getWebSocket()).toBeUndefined();
  });

  it('passes server errors and failed bindings on as error events', async () => {
    const client = fakeClient();
    client.get = async () => ({ resourceType: 'Parameters', parameter: [] }) as never;
    const manager = new SubscriptionManager(client, { WebSocket: FakeWebSocket });
    const emitter = manager.subscribe('Flag');
    const failed = emitter.once('error');
    expect((await failed).error.message).toContain('no binding token');

    const ok = fakeClient();
    const other = new SubscriptionManager(ok, { WebSocket: FakeWebSocket });
    const flags = other.subscribe('Flag');
    await other.ready('Flag');
    await settle();
    FakeWebSocket.last.open();
    const error = flags.once('error');
    FakeWebSocket.last.receive({
      type: 'error',
      payload: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', details: { text: 'Invalid token' } }] },
    });
    expect((await error).error.message).toBe('Invalid token');
    manager.close();
    other.close();
  });
});
