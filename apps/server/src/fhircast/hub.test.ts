import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, type TestMember } from '../test/auth.js';
import { clientToken } from '../agent/testing.js';
import { post, waitFor } from '../bots/testing.js';
import { topicFor } from './topic.js';

// Two server processes (two apps, one database): subscribers on either hear events published on either.
let a: TestApp;
let b: TestApp;
let topic: string;
const ACK_TIMEOUT_MS = 1500;

beforeAll(async () => {
  a = await createTestApp({ listen: true, config: { fhircastAckTimeoutMs: ACK_TIMEOUT_MS } });
  // One public URL for both, as behind a load balancer (tokens name it as their issuer).
  b = await createTestApp({
    listen: true,
    db: a.db,
    config: { fhircastAckTimeoutMs: ACK_TIMEOUT_MS, baseUrl: a.baseUrl },
  });
  topic = a.testProject.tokens['hub.topic'] as string;
}, 120_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
});

type Json = Record<string, unknown>;

async function request(
  t: TestApp,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; form?: Record<string, string>; json?: unknown } = {},
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { ...(options.headers ?? a.authHeaders) };
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const res = await fetch(new URL(path, t.baseUrl), { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

interface Subscriber {
  socket: WebSocket;
  messages: Json[];
  endpoint: string;
  closed: Promise<{ code: number; reason: string }>;
  /** Events (with hub.event) received, in order. */
  events(name?: string): Json[];
}

function eventName(m: Json): string | undefined {
  return (m.event as Json | undefined)?.['hub.event'] as string | undefined;
}

/**
 * Subscribes through `via` and connects the websocket to `t` (any process). With `ack`, each event is
 * acknowledged with that status; without, never.
 */
async function subscribe(
  t: TestApp,
  events: string,
  options: {
    via?: TestApp;
    headers?: Record<string, string>;
    topic?: string;
    ack?: string;
    lease?: string;
    name?: string;
  } = {},
): Promise<Subscriber> {
  const res = await request(options.via ?? a, 'POST', 'fhircast', {
    headers: options.headers,
    form: {
      'hub.mode': 'subscribe',
      'hub.topic': options.topic ?? topic,
      'hub.events': events,
      'hub.channel.type': 'websocket',
      ...(options.lease ? { 'hub.lease_seconds': options.lease } : {}),
      ...(options.name ? { 'subscriber.name': options.name } : {}),
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const endpoint = res.body['hub.channel.endpoint'] as string;
  expect(endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws\/fhircast\//);
  // The endpoint names the process that answered; connect to the one asked for.
  const url = endpoint.replace(/^ws:\/\/[^/]+\//, t.baseUrl.replace(/^http/, 'ws'));
  const socket = new WebSocket(url);
  const messages: Json[] = [];
  const ack = options.ack ?? '200';
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as Json;
    messages.push(message);
    if (eventName(message) && options.ack !== 'never') {
      socket.send(JSON.stringify({ id: message.id, status: ack }));
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    messages,
    endpoint,
    closed,
    events: (name) => messages.filter((m) => eventName(m) && (!name || eventName(m) === name)),
  };
}

async function confirmed(s: Subscriber): Promise<Json> {
  return waitFor(() => s.messages.find((m) => m['hub.mode'] === 'subscribe'));
}

let counter = 0;
function event(name: string, context: unknown[], extra: Json = {}, onTopic = topic): Json {
  counter++;
  return {
    timestamp: new Date().toISOString(),
    id: `evt-${counter}-${Date.now()}`,
    event: { 'hub.topic': onTopic, 'hub.event': name, context, ...extra },
  };
}

const patient = (id: string) => ({ key: 'patient', resource: { resourceType: 'Patient', id } });
const report = (id: string) => ({
  key: 'report',
  resource: { resourceType: 'DiagnosticReport', id, status: 'preliminary' },
});

describe('FHIRcast hub', () => {
  it('answers discovery at .well-known/fhircast-configuration', async () => {
    const res = await request(a, 'GET', '.well-known/fhircast-configuration', { headers: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ websocketSupported: true, fhirVersion: '4.0.1', getCurrentSupport: true });
    expect(res.body.eventsSupported).toEqual(
      expect.arrayContaining(['Patient-open', 'DiagnosticReport-update', 'DiagnosticReport-select', 'SyncError']),
    );
  });

  it('hands out the user topic with the token', async () => {
    expect(topic).toBe(topicFor(a.testProject.projectId, a.testProject.membership.profile.reference as string));
    const member = await addTestMember(a.app, a.services, a.testProject.projectId, {
      scope: 'openid fhircast/Patient-open.read',
    });
    expect(member.tokens.scope).toContain('fhircast/Patient-open.read');
    expect(member.tokens['hub.url']).toBe(`${a.baseUrl}fhircast`);
    expect(member.tokens['hub.topic']).toBe(
      topicFor(a.testProject.projectId, `Practitioner/${member.profile.id as string}`),
    );
    expect(member.tokens['hub.topic']).not.toBe(topic);
  });

  it('confirms subscriptions on the websocket and delivers events to every subscriber, on both processes', async () => {
    const one = await subscribe(a, 'Patient-open,Patient-close', { lease: '600' });
    const two = await subscribe(b, 'patient-open,PATIENT-CLOSE');
    const onlyClose = await subscribe(b, 'Patient-close', { via: b });
    expect(await confirmed(one)).toEqual({
      'hub.mode': 'subscribe',
      'hub.topic': topic,
      'hub.events': 'Patient-open,Patient-close',
      'hub.lease_seconds': expect.any(Number) as number,
    });
    expect((await confirmed(one))['hub.lease_seconds']).toBeGreaterThan(590);
    expect((await confirmed(two))['hub.events']).toBe('Patient-open,Patient-close');
    await confirmed(onlyClose);

    const open = event('Patient-open', [patient('p1')]);
    const published = await request(b, 'POST', `fhircast/${topic}`, { json: open });
    expect(published.status, JSON.stringify(published.body)).toBe(202);
    for (const s of [one, two]) {
      const got = await waitFor(() => s.events('Patient-open')[0]);
      expect(got.id).toBe(open.id);
      expect(got.event).toMatchObject({ 'hub.topic': topic, 'hub.event': 'Patient-open', context: [patient('p1')] });
      expect(typeof (got.event as Json)['context.versionId']).toBe('string');
    }
    const current = await request(a, 'GET', `fhircast/${topic}`);
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ 'context.type': 'Patient', context: [patient('p1')] });

    // The topic in the body of POST /fhircast, as the spec also allows.
    const close = event('Patient-close', [patient('p1')]);
    expect((await request(a, 'POST', 'fhircast', { json: close })).status).toBe(202);
    for (const s of [one, two, onlyClose]) {
      await waitFor(() => s.events('Patient-close')[0]);
    }
    expect(onlyClose.events('Patient-open')).toHaveLength(0);
    expect((await request(b, 'GET', `fhircast/${topic}`)).body).toEqual({ 'context.type': '', context: [] });
    // Everyone acknowledged: no SyncError.
    await new Promise((r) => setTimeout(r, ACK_TIMEOUT_MS + 300));
    expect([...one.events('SyncError'), ...two.events('SyncError')]).toHaveLength(0);
    for (const s of [one, two, onlyClose]) s.socket.close();
  });

  it('keeps the events of different users on their own topics', async () => {
    const member = await addTestMember(a.app, a.services, a.testProject.projectId);
    const theirTopic = member.tokens['hub.topic'] as string;
    expect(theirTopic).toBeTruthy();
    const mine = await subscribe(a, 'Patient-open');
    const theirs = await subscribe(b, 'Patient-open', { headers: member.headers, topic: theirTopic });
    await confirmed(mine);
    await confirmed(theirs);
    const forMember = event('Patient-open', [patient('theirs')], {}, theirTopic);
    expect(
      (await request(a, 'POST', `fhircast/${theirTopic}`, { headers: member.headers, json: forMember })).status,
    ).toBe(202);
    const forMe = event('Patient-open', [patient('mine')]);
    expect((await request(a, 'POST', `fhircast/${topic}`, { json: forMe })).status).toBe(202);
    await waitFor(() => theirs.events()[0]);
    await waitFor(() => mine.events()[0]);
    await new Promise((r) => setTimeout(r, 300));
    expect(theirs.events().map((e) => e.id)).toEqual([forMember.id]);
    expect(mine.events().map((e) => e.id)).toEqual([forMe.id]);
    expect((await request(a, 'GET', `fhircast/${theirTopic}`, { headers: member.headers })).body).toMatchObject({
      context: [patient('theirs')],
    });

    // Nobody uses another's topic: not to publish, subscribe or read its context.
    const intrusion = await request(a, 'POST', `fhircast/${topic}`, {
      headers: member.headers,
      json: event('Patient-open', [patient('x')]),
    });
    expect(intrusion.status).toBe(403);
    expect(JSON.stringify(intrusion.body)).toContain('is not the topic of this token');
    const spy = await request(a, 'POST', 'fhircast', {
      headers: member.headers,
      form: {
        'hub.mode': 'subscribe',
        'hub.topic': topic,
        'hub.events': 'Patient-open',
        'hub.channel.type': 'websocket',
      },
    });
    expect(spy.status).toBe(403);
    expect((await request(b, 'GET', `fhircast/${topic}`, { headers: member.headers })).status).toBe(403);
    mine.socket.close();
    theirs.socket.close();
  });

  it('sends SyncError to the other subscribers when one answers an error or does not answer', async () => {
    const good = await subscribe(a, 'Patient-open', { name: 'viewer' });
    const failing = await subscribe(b, 'Patient-open', { ack: '500', name: 'reporting' });
    const silent = await subscribe(a, 'Patient-open', { ack: 'never', name: 'dictation' });
    await Promise.all([good, failing, silent].map(confirmed));
    const open = event('Patient-open', [patient('p-sync')]);
    expect((await request(a, 'POST', `fhircast/${topic}`, { json: open })).status).toBe(202);

    const errors = await waitFor(() => (good.events('SyncError').length >= 2 ? good.events('SyncError') : undefined));
    const diagnostics = errors.map(
      (e) =>
        (
          ((e.event as Json).context as Json[])[0].resource as {
            issue: { diagnostics: string; details: { coding: { code: string }[] } }[];
          }
        ).issue[0],
    );
    expect(diagnostics.map((d) => d.diagnostics).sort()).toEqual([
      expect.stringMatching(/^dictation could not follow Patient-open .*did not acknowledge/),
      expect.stringMatching(/^reporting could not follow Patient-open .*status 500/),
    ]);
    expect(diagnostics[0].details.coding.map((c) => c.code)).toContain(open.id);
    // The failing subscriber hears of the silent one, not of itself; the silent one of the failing one.
    await waitFor(() => (failing.events('SyncError').length === 1 ? true : undefined));
    expect(JSON.stringify(failing.events('SyncError'))).toContain('dictation');
    await waitFor(() => (silent.events('SyncError').length === 1 ? true : undefined));
    expect(JSON.stringify(silent.events('SyncError'))).toContain('reporting');
    for (const s of [good, failing, silent]) s.socket.close();
  });

  it('shares DiagnosticReport content with versions, and refuses stale versions', async () => {
    const viewer = await subscribe(
      b,
      'DiagnosticReport-open,DiagnosticReport-update,DiagnosticReport-select,DiagnosticReport-close',
    );
    await confirmed(viewer);
    const open = event('DiagnosticReport-open', [
      report('r1'),
      patient('p2'),
      { key: 'study', resource: { resourceType: 'ImagingStudy', id: 's1', status: 'available' } },
    ]);
    expect((await request(a, 'POST', `fhircast/${topic}`, { json: open })).status).toBe(202);
    const delivered = await waitFor(() => viewer.events('DiagnosticReport-open')[0]);
    const v1 = (delivered.event as Json)['context.versionId'] as string;
    const current = await request(b, 'GET', `fhircast/${topic}`);
    expect(current.body['context.type']).toBe('DiagnosticReport');
    expect(current.body['context.versionId']).toBe(v1);

    const observation = { resourceType: 'Observation', id: 'o1', status: 'preliminary', code: { text: 'Nodule' } };
    const update = (prior: string, next: string, entries: unknown[]) =>
      event(
        'DiagnosticReport-update',
        [
          { key: 'report', reference: { reference: 'DiagnosticReport/r1' } },
          { key: 'updates', resource: { resourceType: 'Bundle', type: 'transaction', entry: entries } },
        ],
        { 'context.versionId': next, 'context.priorVersionId': prior },
      );
    const stale = await request(a, 'POST', `fhircast/${topic}`, {
      json: update('not-the-version', 'v2', [{ request: { method: 'POST' }, resource: observation }]),
    });
    expect(stale.status).toBe(409);
    expect(JSON.stringify(stale.body)).toContain('priorVersionId');

    const first = update(v1, 'v2', [{ request: { method: 'POST' }, resource: observation }]);
    expect((await request(a, 'POST', `fhircast/${topic}`, { json: first })).status).toBe(202);
    await waitFor(() => viewer.events('DiagnosticReport-update')[0]);
    let content = await request(b, 'GET', `fhircast/${topic}`);
    expect(content.body['context.versionId']).toBe('v2');
    const bundleOf = (body: Json) => ((body.context as Json[]).find((c) => c.key === 'content') as Json).resource;
    expect(bundleOf(content.body)).toEqual({
      resourceType: 'Bundle',
      type: 'collection',
      entry: [{ resource: observation }],
    });

    // The same prior version again is stale now.
    expect((await request(b, 'POST', `fhircast/${topic}`, { json: update(v1, 'v3', []) })).status).toBe(409);
    const changed = { ...observation, status: 'final' };
    const second = update('v2', 'v3', [
      { request: { method: 'PUT' }, resource: changed },
      {
        request: { method: 'POST' },
        resource: { resourceType: 'Observation', id: 'o2', status: 'final', code: { text: 'Size' } },
      },
      { request: { method: 'DELETE', url: 'Observation/o2' } },
    ]);
    expect((await request(b, 'POST', `fhircast/${topic}`, { json: second })).status).toBe(202);
    content = await request(a, 'GET', `fhircast/${topic}`);
    expect(content.body['context.versionId']).toBe('v3');
    expect(bundleOf(content.body)).toEqual({
      resourceType: 'Bundle',
      type: 'collection',
      entry: [{ resource: changed }],
    });

    const select = event('DiagnosticReport-select', [
      { key: 'report', reference: { reference: 'DiagnosticReport/r1' } },
      { key: 'select', reference: [{ reference: 'Observation/o1' }] },
    ]);
    expect((await request(a, 'POST', `fhircast/${topic}`, { json: select })).status).toBe(202);
    await waitFor(() => viewer.events('DiagnosticReport-select')[0]);
    const otherReport = event('DiagnosticReport-select', [
      { key: 'report', reference: { reference: 'DiagnosticReport/other' } },
      { key: 'select', reference: [{ reference: 'Observation/o1' }] },
    ]);
    const wrong = await request(a, 'POST', `fhircast/${topic}`, { json: otherReport });
    expect(wrong.status).toBe(409);
    expect(JSON.stringify(wrong.body)).toContain('DiagnosticReport/other is not the open anchor context');

    expect(
      (
        await request(a, 'POST', `fhircast/${topic}`, {
          json: event('DiagnosticReport-close', [report('r1'), patient('p2')]),
        })
      ).status,
    ).toBe(202);
    expect((await request(a, 'GET', `fhircast/${topic}`)).body).toEqual({ 'context.type': '', context: [] });
    const afterClose = await request(a, 'POST', `fhircast/${topic}`, { json: update('v3', 'v4', []) });
    expect(afterClose.status).toBe(409);
    viewer.socket.close();
  });

  it('delivers events too large for a database notification', async () => {
    const viewer = await subscribe(b, 'ImagingStudy-open');
    await confirmed(viewer);
    const description = 'x'.repeat(20_000);
    const open = event('ImagingStudy-open', [
      { key: 'study', resource: { resourceType: 'ImagingStudy', id: 'big', status: 'available', description } },
    ]);
    expect((await request(a, 'POST', `fhircast/${topic}`, { json: open })).status).toBe(202);
    const got = await waitFor(() => viewer.events('ImagingStudy-open')[0]);
    expect(JSON.stringify(got)).toContain(description);
    viewer.socket.close();
  });

  it('refuses events whose context the event type requires is missing or mistyped', async () => {
    const cases: [Json, string][] = [
      [event('Patient-open', []), 'Patient-open requires context "patient"'],
      [
        event('Patient-open', [{ key: 'patient', resource: { resourceType: 'Encounter', id: 'e' } }]),
        'must be a Patient',
      ],
      [
        event('Encounter-open', [{ key: 'encounter', resource: { resourceType: 'Encounter', id: 'e' } }]),
        'requires context "patient"',
      ],
      [event('ImagingStudy-close', [patient('p')]), 'requires context "study"'],
      [event('DiagnosticReport-open', [report('r')]), 'requires context "patient"'],
      [
        event('DiagnosticReport-update', [
          report('r'),
          { key: 'updates', resource: { resourceType: 'Bundle', type: 'transaction' } },
        ]),
        'context.versionId',
      ],
      [event('DiagnosticReport-select', [report('r')]), 'requires context "select"'],
      [event('Patient-explode', [patient('p')]), 'Unsupported event "Patient-explode"'],
      [{ id: 'x', event: { 'hub.topic': topic, 'hub.event': 'Patient-open', context: [] } }, 'timestamp'],
    ];
    for (const [body, message] of cases) {
      const res = await request(a, 'POST', `fhircast/${topic}`, { json: body });
      expect(res.status, message).toBe(400);
      expect(res.body.resourceType).toBe('OperationOutcome');
      expect((res.body.issue as { details: { text: string } }[])[0].details.text).toContain(message);
    }
    const mismatch = await request(a, 'POST', 'fhircast/some-other-topic', {
      json: event('Patient-open', [patient('p')]),
    });
    expect(mismatch.status).toBe(400);
    const webhook = await request(a, 'POST', 'fhircast', {
      form: {
        'hub.mode': 'subscribe',
        'hub.topic': topic,
        'hub.events': 'Patient-open',
        'hub.channel.type': 'webhook',
      },
    });
    expect(webhook.status).toBe(400);
    expect(JSON.stringify(webhook.body)).toContain('hub.channel.type');
    const unknown = await request(a, 'POST', 'fhircast', {
      form: {
        'hub.mode': 'subscribe',
        'hub.topic': topic,
        'hub.events': 'Patient-open,Nope-open',
        'hub.channel.type': 'websocket',
      },
    });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('Nope-open');
    expect((await request(a, 'GET', `fhircast/${topic}`, { headers: {} })).status).toBe(401);
  });

  it('enforces fhircast scopes: read to subscribe, write to publish', async () => {
    const reader = await addTestMember(a.app, a.services, a.testProject.projectId, {
      scope: 'openid fhircast/Patient-open.read fhircast/Patient-close.write',
    });
    const theirTopic = reader.tokens['hub.topic'] as string;
    const ok = await subscribe(a, 'Patient-open', { headers: reader.headers, topic: theirTopic });
    await confirmed(ok);
    ok.socket.close();
    const form = (events: string) => ({
      'hub.mode': 'subscribe',
      'hub.topic': theirTopic,
      'hub.events': events,
      'hub.channel.type': 'websocket',
    });
    const noRead = await request(a, 'POST', 'fhircast', {
      headers: reader.headers,
      form: form('Patient-open,Patient-close'),
    });
    expect(noRead.status).toBe(403);
    expect(JSON.stringify(noRead.body)).toContain('fhircast/Patient-close.read');
    const noWrite = await request(a, 'POST', `fhircast/${theirTopic}`, {
      headers: reader.headers,
      json: event('Patient-open', [patient('p')], {}, theirTopic),
    });
    expect(noWrite.status).toBe(403);
    expect(JSON.stringify(noWrite.body)).toContain('fhircast/Patient-open.write');
    const write = await request(a, 'POST', `fhircast/${theirTopic}`, {
      headers: reader.headers,
      json: event('Patient-close', [patient('p')], {}, theirTopic),
    });
    expect(write.status).toBe(202);

    // A client application's token without any fhircast scope may not use the hub.
    const client = (
      await post(a, `admin/projects/${a.testProject.projectId}/client`, { name: 'cast client' })
    ).json() as {
      id: string;
      secret: string;
    };
    const clientHeaders = { authorization: `Bearer ${await clientToken(a.baseUrl, client.id, client.secret)}` };
    const clientTopic = topicFor(a.testProject.projectId, `ClientApplication/${client.id}`);
    const refused = await request(a, 'POST', 'fhircast', {
      headers: clientHeaders,
      form: { ...form('Patient-open'), 'hub.topic': clientTopic },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.resourceType).toBe('OperationOutcome');
  });

  it('honours leases and unsubscription', async () => {
    const short = await subscribe(b, 'Patient-open', { lease: '1' });
    expect((await confirmed(short))['hub.lease_seconds']).toBeLessThanOrEqual(1);
    const closed = await short.closed;
    expect(closed.reason).toBe('Subscription lease expired');
    // The expired endpoint is refused when connected again.
    const again = new WebSocket(short.endpoint.replace(/^ws:\/\/[^/]+\//, a.baseUrl.replace(/^http/, 'ws')));
    const denial = await new Promise<Json>((resolve) =>
      again.on('message', (d) => resolve(JSON.parse(String(d)) as Json)),
    );
    expect(denial).toMatchObject({ 'hub.mode': 'denied', 'hub.topic': topic });

    const member: TestMember = await addTestMember(a.app, a.services, a.testProject.projectId);
    const leaving = await subscribe(b, 'Patient-open,Patient-close');
    await confirmed(leaving);
    const connected = b.services.fhircast.hub.connectedCount(topic);
    expect(connected).toBeGreaterThanOrEqual(1);
    const form = {
      'hub.mode': 'unsubscribe',
      'hub.topic': topic,
      'hub.events': 'Patient-open,Patient-close',
      'hub.channel.type': 'websocket',
      'hub.channel.endpoint': leaving.endpoint,
    };
    // Another user cannot end it.
    expect((await request(a, 'POST', 'fhircast', { headers: member.headers, form })).status).toBe(403);
    expect((await request(a, 'POST', 'fhircast', { form })).status).toBe(202);
    expect((await leaving.closed).reason).toBe('Unsubscribed');
    expect(leaving.messages.at(-1)).toMatchObject({ 'hub.mode': 'unsubscribe', 'hub.topic': topic });
    expect(b.services.fhircast.hub.connectedCount(topic)).toBe(connected - 1);
  });
});
