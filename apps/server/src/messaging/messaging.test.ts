// Messaging end to end on the server: threads of Communications between staff and a patient
// user (access policy to their own compartment), read receipts and unread counts by search,
// $mark-read, and the email to offline recipients (local SMTP server; none while connected).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  buildMessage,
  HearthClient,
  MemoryStorage,
  readReceipts,
  SubscriptionManager,
  type Communication,
  type Resource,
  type WebSocketConstructor,
} from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, type TestMember } from '../test/auth.js';
import { emailText, startTestSmtpServer, type TestSmtpServer } from '../test/smtp.js';
import { waitFor } from '../bots/testing.js';
import { NOTIFY_QUEUE } from './notify.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
let smtp: TestSmtpServer;
let alice: TestMember;
let bob: TestMember;
let staff: string;

async function request(
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
): Promise<{ statusCode: number; json: () => Record<string, unknown> & Resource; body: string }> {
  return t.app.inject({
    method,
    url: `/fhir/R4/${url}`,
    headers: { ...headers, ...(payload ? { 'content-type': FHIR } : {}) },
    payload: payload as Record<string, unknown> | undefined,
  });
}

async function send(headers: Record<string, string>, message: Communication): Promise<Communication> {
  const res = await request('POST', 'Communication', headers, message);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as unknown as Communication;
}

const unreadQuery = (me: string) =>
  `Communication?recipient=${me}&_filter=${encodeURIComponent(`not (read-by eq ${me})`)}&_summary=count`;

async function unreadCount(headers: Record<string, string>, me: string): Promise<number> {
  const res = await request('GET', unreadQuery(me), headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().total as number;
}

/** Waits until the notification job of a message has run (its emails, if any, are sent by then). */
async function notified(id: string | undefined): Promise<void> {
  await waitFor(async () => {
    const { rows } = await t.pool.query<{ state: string }>(
      `SELECT state FROM pgboss.job WHERE name = $1 AND data->>'id' = $2`,
      [NOTIFY_QUEUE, id],
    );
    return rows[0]?.state === 'completed' ? true : undefined;
  });
}

const mailTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

/** The access policy a patient portal user gets: their own record, messages and subscriptions. */
async function patientPolicy(): Promise<string> {
  const res = await request('POST', 'AccessPolicy', t.authHeaders, {
    resourceType: 'AccessPolicy',
    name: 'Patient portal',
    resource: [
      { resourceType: 'Patient', criteria: 'Patient?_id=%patient.id', readonly: true },
      { resourceType: 'Communication', criteria: 'Communication?_compartment=%patient' },
      { resourceType: 'Subscription', criteria: 'Subscription?criteria:exact=Communication?recipient=%patient' },
      { resourceType: 'Practitioner', readonly: true },
    ],
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  t = await createTestApp({
    listen: true,
    config: { smtpHost: '127.0.0.1', smtpPort: smtp.port, smtpSecure: false, appBaseUrl: 'https://app.example.org' },
  });
  staff = `Practitioner/${t.testProject.profile.id}`;
  const policy = await patientPolicy();
  const member = { membership: { accessPolicy: { reference: `AccessPolicy/${policy}` } } };
  alice = await addTestMember(t.app, t.services, t.testProject.projectId, { profileType: 'Patient', ...member });
  bob = await addTestMember(t.app, t.services, t.testProject.projectId, { profileType: 'Patient', ...member });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('messaging', () => {
  let thread: Communication;
  let reply: Communication;
  const aliceRef = () => `Patient/${alice.profile.id}`;

  it('staff start a thread with a patient, who is offline and gets an email without the content', async () => {
    thread = await send(
      t.authHeaders,
      buildMessage({
        subject: { reference: aliceRef() },
        sender: { reference: staff },
        recipients: [{ reference: aliceRef() }],
        topic: 'Your lab results',
        text: 'Your potassium is a little high.',
      }),
    );
    const mail = await smtp.waitFor(alice.email);
    expect(mail.raw).toContain('Subject: You have a new message');
    expect(emailText(mail.raw)).toContain(`https://app.example.org/messages/${thread.id}`);
    expect(mail.raw).not.toContain('potassium');
    expect(mail.raw).not.toContain('lab results');
    expect(await unreadCount(alice.headers, aliceRef())).toBe(1);
  });

  it('the patient reads the thread and replies; staff have one unread message and an email', async () => {
    const read = await request('GET', `Communication/${thread.id}`, alice.headers);
    expect(read.statusCode).toBe(200);
    reply = await send(
      alice.headers,
      buildMessage({
        subject: { reference: aliceRef() },
        sender: { reference: aliceRef() },
        recipients: [{ reference: staff }],
        topic: 'Your lab results',
        text: 'Should I stop the supplements?',
        inResponseTo: thread,
      }),
    );
    expect(reply.partOf).toEqual([{ reference: `Communication/${thread.id}` }]);
    expect(reply.inResponseTo).toEqual([{ reference: `Communication/${thread.id}` }]);
    expect(await unreadCount(t.authHeaders, staff)).toBe(1);
    const mail = await smtp.waitFor(t.testProject.email);
    expect(emailText(mail.raw)).toContain(`https://app.example.org/messages/${thread.id}`);
    expect(mail.raw).not.toContain('supplements');
    // The whole thread is one search.
    const all = await request('GET', `Communication?part-of=Communication/${thread.id}`, alice.headers);
    expect((all.json().entry as { resource: Resource }[]).map((e) => e.resource.id)).toEqual([reply.id]);
  });

  it('$mark-read gives read receipts to the messages addressed to the caller, once', async () => {
    const marked = await request('POST', `Communication/${thread.id}/$mark-read`, alice.headers, {
      resourceType: 'Parameters',
    });
    expect(marked.statusCode, marked.body).toBe(200);
    expect(marked.json().parameter).toEqual([{ name: 'marked', valueInteger: 1 }]);
    expect(await unreadCount(alice.headers, aliceRef())).toBe(0);
    const first = (
      await request('GET', `Communication/${thread.id}`, t.authHeaders)
    ).json() as unknown as Communication;
    expect(readReceipts(first).map((r) => r.reader)).toEqual([aliceRef()]);
    expect(first.received).toBeTruthy();
    // Her own reply is not hers to mark (staff's unread count is unchanged); again, nothing changes.
    expect(await unreadCount(t.authHeaders, staff)).toBe(1);
    const again = await request('POST', `Communication/${thread.id}/$mark-read`, alice.headers);
    expect(again.json().parameter).toEqual([{ name: 'marked', valueInteger: 0 }]);

    const staffMarked = await request('POST', `Communication/${thread.id}/$mark-read`, t.authHeaders);
    expect(staffMarked.json().parameter).toEqual([{ name: 'marked', valueInteger: 1 }]);
    expect(await unreadCount(t.authHeaders, staff)).toBe(0);
  });

  it('refuses a reply id, an unknown thread and a thread the caller cannot see', async () => {
    const onReply = await request('POST', `Communication/${reply.id}/$mark-read`, alice.headers);
    expect(onReply.statusCode).toBe(400);
    expect(onReply.body).toContain(`mark that thread read`);
    expect(
      (await request('POST', 'Communication/00000000-0000-4000-8000-000000000000/$mark-read', alice.headers))
        .statusCode,
    ).toBe(404);
    expect((await request('POST', `Communication/${thread.id}/$mark-read`, bob.headers)).statusCode).toBe(404);
    expect((await request('GET', `Communication/${thread.id}`, bob.headers)).statusCode).toBe(404);
    expect(await unreadCount(bob.headers, `Patient/${bob.profile.id}`)).toBe(0);
  });

  it('a patient cannot read other patients’ messages nor subscribe to them', async () => {
    const other = await request('POST', 'Subscription', bob.headers, {
      resourceType: 'Subscription',
      status: 'active',
      reason: 'peek',
      criteria: `Communication?recipient=${aliceRef()}`,
      channel: { type: 'websocket' },
    });
    expect(other.statusCode).toBe(403);
  });

  it('a connected recipient gets the message live and no email; once gone, email again', async () => {
    const client = new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
    client.setAccessToken(alice.tokens.access_token);
    const manager = new SubscriptionManager(client, { WebSocket: WebSocket as unknown as WebSocketConstructor });
    const emitter = manager.subscribe<Communication>(`Communication?recipient=${aliceRef()}`);
    await emitter.once('connect');
    await waitFor(async () =>
      (await t.services.automation.subscriptions.isConnected(t.testProject.projectId, aliceRef())) ? true : undefined,
    );
    const before = mailTo(alice.email).length;
    const live = emitter.once('message');
    const followUp = await send(
      t.authHeaders,
      buildMessage({
        subject: { reference: aliceRef() },
        sender: { reference: staff },
        recipients: [{ reference: aliceRef() }],
        topic: 'Your lab results',
        text: 'No, keep taking them.',
        inResponseTo: reply,
      }),
    );
    expect((await live).resource?.id).toBe(followUp.id);
    await notified(followUp.id);
    expect(mailTo(alice.email).length).toBe(before);

    await manager.unsubscribe(`Communication?recipient=${aliceRef()}`);
    await waitFor(async () =>
      (await t.services.automation.subscriptions.isConnected(t.testProject.projectId, aliceRef())) ? undefined : true,
    );
    await send(
      t.authHeaders,
      buildMessage({
        subject: { reference: aliceRef() },
        sender: { reference: staff },
        recipients: [{ reference: aliceRef() }],
        topic: 'Your lab results',
        text: 'One more thing.',
        inResponseTo: followUp,
      }),
    );
    await waitFor(() => (mailTo(alice.email).length === before + 1 ? true : undefined));
  });
});
