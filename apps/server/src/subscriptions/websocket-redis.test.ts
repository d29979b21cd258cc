// Websocket notifications across two server processes that share Redis (HEARTH_REDIS_URL) for messages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { redisForSuite, startTestRedis, type TestRedis } from '../test/redis.js';
import { FHIR_JSON, get, post, waitFor } from '../bots/testing.js';

const hasRedis = redisForSuite();

let redis: TestRedis | undefined;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  if (!hasRedis) {
    return;
  }
  redis = await startTestRedis();
  const redisUrl = redis.url;
  a = await createTestApp({ listen: true, config: { redisUrl } });
  b = await createTestApp({ listen: true, db: a.db, config: { redisUrl } });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  redis?.stop();
});

describe.runIf(hasRedis)('websocket subscriptions across processes over Redis', () => {
  it('a socket bound on process B receives notifications of writes made on process A', async () => {
    const created = await post(
      a,
      'fhir/R4/Subscription',
      {
        resourceType: 'Subscription',
        status: 'active',
        reason: 'redis',
        criteria: 'Patient?name=Redis',
        channel: { type: 'websocket' },
      },
      FHIR_JSON,
    );
    const id = (created.json() as Resource).id as string;
    const binding = (await get(a, `fhir/R4/Subscription/${id}/$get-ws-binding-token`)).json() as {
      parameter: { name: string; valueString?: string }[];
    };
    const token = binding.parameter.find((p) => p.name === 'token')?.valueString;

    const socket = new WebSocket(`${b.baseUrl.replace(/^http/, 'ws')}ws/subscriptions-r4`);
    const messages: Record<string, unknown>[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token } }));
    await waitFor(() => (b.services.automation.subscriptions.hub.boundCount(id) === 1 ? true : undefined));

    const patient = (
      await post(a, 'fhir/R4/Patient', { resourceType: 'Patient', name: [{ family: 'Redis' }] }, FHIR_JSON)
    ).json() as Resource;
    const notification = await waitFor(() =>
      messages.find(
        (m) => JSON.stringify(m).includes('event-notification') && JSON.stringify(m).includes(patient.id as string),
      ),
    );
    expect(notification.resourceType).toBe('Bundle');
    socket.close();
  });
});
