// Agent/{id}/$messages against a real running hearth-agent: HL7 in through MLLP channels (with the
// bot's ACK), a $push out to an npm MLLP server (with its ACK), newest first, per channel, and
// read access to the Agent as $status checks it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error mllp-node ships no types
import mllp from 'mllp-node';
import { Hl7Message } from '@hearth/core';
import { HearthAgent } from '../../../agent/src/agent.js';
import { hl7, mllpClient, quietLog } from '../../../agent/src/testing.js';
import { createTestApp, getFreePort, type TestApp } from '../test/app.js';
import { createTestProject } from '../test/auth.js';
import { get, post, waitFor } from '../bots/testing.js';
import { createTestAgent, type TestAgent } from './testing.js';

const BOT = `
import { buildAck } from '@hearth/core';
export async function handler(client: any, event: any) {
  const message = event.input;
  if (message.get('PID-3').includes('fail')) throw new Error('bot refused ' + message.controlId);
  return buildAck(message, { code: 'AA', text: 'seen ' + message.controlId });
}
`;

interface Part {
  name: string;
  valueString?: string;
  valueCode?: string;
  valueInstant?: string;
  valueInteger?: number;
}
interface Message {
  id: string;
  channel: string;
  direction: string;
  time: string;
  remote: string;
  contentType: string;
  body: string;
  response?: string;
  statusCode: number;
}

let t: TestApp;
let testAgent: TestAgent;
let agent: HearthAgent | undefined;
let dataDir: string;
let adtPort: number;
let labPort: number;

/** The messages $messages answers, each as a plain object of its parts. */
async function messages(query = ''): Promise<Message[]> {
  const res = await get(t, `fhir/R4/Agent/${testAgent.agentId}/$messages${query}`);
  expect(res.status, res.text).toBe(200);
  const body = res.json() as { resourceType: string; parameter?: { name: string; part: Part[] }[] };
  expect(body.resourceType).toBe('Parameters');
  return (body.parameter ?? []).map((p) => {
    expect(p.name).toBe('message');
    return Object.fromEntries(
      p.part.map((part) => [part.name, part.valueString ?? part.valueCode ?? part.valueInstant ?? part.valueInteger]),
    ) as unknown as Message;
  });
}

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  adtPort = await getFreePort();
  labPort = await getFreePort();
  testAgent = await createTestAgent(t, BOT, [
    { name: 'adt', address: `mllp://127.0.0.1:${adtPort}?ackMode=durable` },
    { name: 'lab', address: `mllp://127.0.0.1:${labPort}?ackMode=durable` },
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'hearth-agent-messages-'));
});

afterAll(async () => {
  await agent?.stop();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Agent/{id}/$messages', () => {
  it('answers an empty Parameters before the agent has carried anything', async () => {
    expect(await messages()).toEqual([]);
  });

  it("lists what came in through each channel with the bot's answer, newest first, one channel on request", async () => {
    agent = new HearthAgent(
      {
        baseUrl: t.baseUrl,
        agentId: testAgent.agentId,
        clientId: testAgent.clientId,
        clientSecret: testAgent.clientSecret,
        dataDir,
        heartbeatMs: 1000,
      },
      quietLog,
    );
    await agent.start();
    const adt = await mllpClient(adtPort);
    expect(Hl7Message.parse(await adt.send(hl7('A1'))).get('MSA-3')).toBe('seen A1');
    expect(Hl7Message.parse(await adt.send(hl7('A2', 'fail'))).get('MSA-1')).toBe('AE');
    adt.close();
    const lab = await mllpClient(labPort);
    expect(Hl7Message.parse(await lab.send(hl7('L1'))).get('MSA-1')).toBe('AA');
    lab.close();

    // The hub writes its log every half second.
    const all = await waitFor(async () => {
      const list = await messages();
      return list.length >= 3 ? list : undefined;
    });
    expect(all.map((m) => [m.channel, m.body.split('\r')[0].split('|')[9]])).toEqual([
      ['lab', 'L1'],
      ['adt', 'A2'],
      ['adt', 'A1'],
    ]);
    const [l1, a2, a1] = all;
    expect(l1).toMatchObject({ direction: 'in', contentType: 'x-application/hl7-v2+er7', statusCode: 200 });
    expect(l1.remote).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(Hl7Message.parse(l1.response ?? '').get('MSA-2')).toBe('L1');
    expect(a1.response).toContain('MSA|AA|A1|seen A1');
    expect(a2).toMatchObject({ statusCode: 400, response: expect.stringContaining('bot refused A2') });
    expect(Date.parse(l1.time)).toBeGreaterThanOrEqual(Date.parse(a1.time));

    expect(new Set(all.map((m) => m.id)).size).toBe(3);
    const adtOnly = await messages('?channel=adt');
    expect(adtOnly.map((m) => m.channel)).toEqual(['adt', 'adt']);
    expect(await messages('?channel=none')).toEqual([]);
    // POST with a Parameters body asks the same.
    const posted = await post(t, `fhir/R4/Agent/${testAgent.agentId}/$messages`, {
      resourceType: 'Parameters',
      parameter: [{ name: 'channel', valueString: 'lab' }],
    });
    expect(posted.status).toBe(200);
    expect((posted.json() as { parameter: unknown[] }).parameter).toHaveLength(1);
  });

  it("logs a $push under the channel it went through, with the remote's answer", async () => {
    const port = await getFreePort();
    const remote = new mllp.MLLPServer('127.0.0.1', port, () => undefined);
    const received = new Promise<string>((resolve) => remote.on('hl7', resolve));
    const res = await post(t, `fhir/R4/Agent/${testAgent.agentId}/$push`, {
      destination: `mllp://127.0.0.1:${port}`,
      body: hl7('P1').replace(/\r$/, ''),
      contentType: 'x-application/hl7-v2+er7',
    });
    expect(res.status, res.text).toBe(200);
    expect(await received).toContain('|P1|');
    const unreachable = await post(t, `fhir/R4/Agent/${testAgent.agentId}/$push`, {
      destination: `mllp://127.0.0.1:${await getFreePort()}`,
      channel: 'lab',
      body: hl7('P2'),
      contentType: 'x-application/hl7-v2+er7',
    });
    expect(unreachable.status).toBe(502);
    const [p2, p1] = await waitFor(async () => {
      const list = await messages();
      return list.filter((m) => m.direction === 'out').length === 2 ? list : undefined;
    });
    // Without a channel named, the agent picked the first mllp one and said which.
    expect(p1).toMatchObject({ direction: 'out', channel: 'adt', remote: `mllp://127.0.0.1:${port}`, statusCode: 200 });
    expect(Hl7Message.parse(p1.response ?? '').get('MSA-2')).toBe('P1');
    expect(p2).toMatchObject({ direction: 'out', channel: 'lab', statusCode: 502 });
    expect(p2.response).toContain('ECONNREFUSED');
  });

  it('is read like $status: another project gets 404, no token 401, a repeated channel 400', async () => {
    const other = await createTestProject(t.app, t.services, 'Other Project');
    const foreign = await fetch(new URL(`fhir/R4/Agent/${testAgent.agentId}/$messages`, t.baseUrl), {
      headers: other.headers,
    });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { resourceType: string }).resourceType).toBe('OperationOutcome');
    const anonymous = await fetch(new URL(`fhir/R4/Agent/${testAgent.agentId}/$messages`, t.baseUrl));
    expect(anonymous.status).toBe(401);
    const twice = await get(t, `fhir/R4/Agent/${testAgent.agentId}/$messages?channel=adt&channel=lab`);
    expect(twice.status).toBe(400);
    expect(twice.text).toContain('channel is given more than once');
    const missing = await get(t, 'fhir/R4/Agent/00000000-0000-4000-8000-000000000000/$messages');
    expect(missing.status).toBe(404);
  });
});
