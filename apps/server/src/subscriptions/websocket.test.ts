import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Bundle, Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { createBot, FHIR_JSON, get, post, waitFor } from '../bots/testing.js';

// Two server processes (two apps, each with its own pool, workers and websocket hub) on one database.
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  a = await createTestApp({ listen: true });
  b = await createTestApp({ listen: true, db: a.db });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

function wsUrl(t: TestApp): string {
  return `${t.baseUrl.replace(/^http/, 'ws')}ws/subscriptions-r4`;
}

interface Client {
  socket: WebSocket;
  messages: Record<string, unknown>[];
}

async function connect(t: TestApp): Promise<Client> {
  const socket = new WebSocket(wsUrl(t));
  const messages: Record<string, unknown>[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { socket, messages };
}

async function websocketSubscription(criteria: string): Promise<{ id: string; token: string; url: string }> {
  const created = await post(
    a,
    'fhir/R4/Subscription',
    { resourceType: 'Subscription', status: 'active', reason: 'ws test', criteria, channel: { type: 'websocket' } },
    FHIR_JSON,
  );
  expect(created.status).toBe(201);
  const id = (created.json() as Resource).id as string;
  const binding = await get(a, `fhir/R4/Subscription/${id}/$get-ws-binding-token`);
  expect(binding.status).toBe(200);
  const params = binding.json() as { parameter: { name: string; valueString?: string; valueUrl?: string }[] };
  const token = params.parameter.find((p) => p.name === 'token')?.valueString as string;
  const url = params.parameter.find((p) => p.name === 'websocket-url')?.valueUrl as string;
  return { id, token, url };
}

function notifications(client: Client): Bundle[] {
  return client.messages.filter(
    (m) =>
      m.resourceType === 'Bundle' &&
      (m as { entry?: { resource?: { type?: string } }[] }).entry?.[0]?.resource?.type === 'event-notification',
  ) as unknown as Bundle[];
}

describe('websocket subscriptions across server processes', () => {
  it('a socket bound on process B receives notifications of writes made on process A', async () => {
    const { id, token, url } = await websocketSubscription('Patient?name=Socket');
    expect(url).toBe(wsUrl(a));
    const client = await connect(b);
    client.socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token } }));
    const handshake = await waitFor(() => client.messages.find((m) => m.resourceType === 'Bundle'));
    expect(JSON.stringify(handshake)).toContain('"type":"handshake"');
    await waitFor(() => (b.services.automation.subscriptions.hub.boundCount(id) === 1 ? true : undefined));

    const ignored = await post(
      a,
      'fhir/R4/Patient',
      { resourceType: 'Patient', name: [{ family: 'Other' }] },
      FHIR_JSON,
    );
    const created = await post(
      a,
      'fhir/R4/Patient',
      { resourceType: 'Patient', name: [{ family: 'Socket' }] },
      FHIR_JSON,
    );
    const patient = created.json() as Resource;
    const [bundle] = await waitFor(() => (notifications(client).length ? notifications(client) : undefined));
    expect(bundle.type).toBe('history');
    const status = bundle.entry?.[0]?.resource as Resource & Record<string, unknown>;
    expect(status.resourceType).toBe('SubscriptionStatus');
    expect(status.subscription).toEqual({ reference: `Subscription/${id}` });
    expect(status.notificationEvent).toMatchObject([{ focus: { reference: `Patient/${patient.id}` } }]);
    expect(bundle.entry?.[1]?.resource).toMatchObject({ resourceType: 'Patient', id: patient.id });
    expect(bundle.entry?.[1]?.fullUrl).toBe(`${b.baseUrl}fhir/R4/Patient/${patient.id}`);
    await new Promise((r) => setTimeout(r, 500));
    expect(JSON.stringify(notifications(client))).not.toContain((ignored.json() as Resource).id as string);
    client.socket.close();
  });

  it('sockets on both processes receive the same notification; unbinding stops it', async () => {
    const { id, token } = await websocketSubscription('Observation?code=socket-obs');
    const onA = await connect(a);
    const onB = await connect(b);
    for (const c of [onA, onB]) {
      c.socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token } }));
    }
    await waitFor(() =>
      a.services.automation.subscriptions.hub.boundCount(id) === 1 &&
      b.services.automation.subscriptions.hub.boundCount(id) === 1
        ? true
        : undefined,
    );
    // Written through process B's repository, in A's project.
    await b.services
      .systemRepo(a.testProject.projectId)
      .createResource({ resourceType: 'Observation', status: 'final', code: { coding: [{ code: 'socket-obs' }] } });
    await waitFor(() => (notifications(onA).length === 1 && notifications(onB).length === 1 ? true : undefined));
    // One notification, one id, whichever process's socket carried it (clients can drop duplicates).
    expect(notifications(onA)[0].id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(notifications(onB)[0].id).toBe(notifications(onA)[0].id);

    onB.socket.send(JSON.stringify({ type: 'unbind-from-token', payload: { token } }));
    await waitFor(() => (b.services.automation.subscriptions.hub.boundCount(id) === 0 ? true : undefined));
    await post(
      a,
      'fhir/R4/Observation',
      { resourceType: 'Observation', status: 'final', code: { coding: [{ code: 'socket-obs' }] } },
      FHIR_JSON,
    );
    await waitFor(() => (notifications(onA).length === 2 ? true : undefined));
    expect(notifications(onA)[1].id).not.toBe(notifications(onA)[0].id);
    await new Promise((r) => setTimeout(r, 300));
    expect(notifications(onB)).toHaveLength(1);
    onA.socket.close();
    onB.socket.close();
  });

  it("notifies only what the subscription's author may read", async () => {
    // The author: a bot whose access policy lets it read Patients (and manage its subscriptions) only.
    const policy = await post(
      a,
      'fhir/R4/AccessPolicy',
      {
        resourceType: 'AccessPolicy',
        name: 'patients only',
        resource: [
          { resourceType: 'Subscription' },
          { resourceType: 'Patient', readonly: true, hiddenFields: ['birthDate'] },
        ],
      },
      FHIR_JSON,
    );
    const author = await createBot(a, {}, `AccessPolicy/${(policy.json() as Resource).id}`);
    const asAuthor = await a.services.automation.members.forProfile(a.testProject.projectId, `Bot/${author.id}`);
    const client = await connect(b);
    const ids: Record<string, string> = {};
    for (const criteria of ['Patient?name=Authored', 'Observation?code=authored']) {
      const sub = (
        await asAuthor.createResource({
          resourceType: 'Subscription',
          status: 'active',
          reason: 'author access',
          criteria,
          channel: { type: 'websocket' },
        })
      ).resource;
      expect(sub.meta?.author?.reference).toBe(`Bot/${author.id}`);
      ids[criteria.split('?')[0]] = sub.id as string;
      const binding = await get(a, `fhir/R4/Subscription/${sub.id as string}/$get-ws-binding-token`);
      const token = (binding.json() as { parameter: { name: string; valueString?: string }[] }).parameter.find(
        (p) => p.name === 'token',
      )?.valueString;
      client.socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token } }));
    }
    const hub = b.services.automation.subscriptions.hub;
    await waitFor(() =>
      hub.boundCount(ids.Patient) === 1 && hub.boundCount(ids.Observation) === 1 ? true : undefined,
    );

    const obs = (
      await post(
        a,
        'fhir/R4/Observation',
        { resourceType: 'Observation', status: 'final', code: { coding: [{ code: 'authored' }] } },
        FHIR_JSON,
      )
    ).json() as Resource;
    const patient = (
      await post(
        a,
        'fhir/R4/Patient',
        { resourceType: 'Patient', name: [{ family: 'Authored' }], birthDate: '1970-01-01' },
        FHIR_JSON,
      )
    ).json() as Resource;
    await waitFor(() => (JSON.stringify(notifications(client)).includes(patient.id as string) ? true : undefined));
    // The author's policy hides birthDate: so does the notification, read on process B as the author.
    const delivered = notifications(client).find((n) => JSON.stringify(n).includes(patient.id as string));
    expect(delivered?.entry?.[1]?.resource).toMatchObject({ resourceType: 'Patient', id: patient.id });
    expect((delivered?.entry?.[1]?.resource as { birthDate?: string }).birthDate).toBeUndefined();
    await new Promise((r) => setTimeout(r, 500));
    const text = JSON.stringify(notifications(client));
    expect(text).not.toContain(obs.id as string);
    expect(text).not.toContain(`Subscription/${ids.Observation}`);
    client.socket.close();
  });

  it('rejects a forged or tampered token, and answers ping', async () => {
    const { token } = await websocketSubscription('Patient');
    const client = await connect(b);
    const [payload, sig] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ s: 'other', p: 'x', e: 9999999999 })).toString('base64url')}.${sig}`;
    client.socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token: forged } }));
    client.socket.send(JSON.stringify({ type: 'bind-with-token', payload: { token: `${payload}.AAAA` } }));
    client.socket.send(JSON.stringify({ type: 'ping' }));
    await waitFor(() => (client.messages.length >= 3 ? true : undefined));
    expect(client.messages.filter((m) => m.type === 'error')).toHaveLength(2);
    expect(client.messages.some((m) => m.type === 'pong')).toBe(true);
    expect(b.services.automation.subscriptions.hub.boundCount('other')).toBe(0);
    client.socket.close();
  });

  it('is also served under /api', async () => {
    const socket = new WebSocket(`${b.baseUrl.replace(/^http/, 'ws')}api/ws/subscriptions-r4`);
    const pong = await new Promise<string>((resolve, reject) => {
      socket.once('open', () => socket.send(JSON.stringify({ type: 'ping' })));
      socket.once('message', (data) => resolve(String(data)));
      socket.once('error', reject);
    });
    expect(JSON.parse(pong)).toEqual({ type: 'pong' });
    socket.close();
  });
});
