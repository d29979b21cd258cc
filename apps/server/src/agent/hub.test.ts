import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseAgentMessage, type AgentMessage } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { deploy, get, post } from '../bots/testing.js';
import { createTestAgent, type TestAgent } from './testing.js';

const HL7_BOT = `
import { buildAck } from '@hearth/core';
export async function handler(client: any, event: any) {
  const message = event.input;
  if (message.get('PID-3') === 'fail') throw new Error('refused by bot');
  await client.createResource({ resourceType: 'Basic', code: { text: message.controlId } });
  return buildAck(message, { code: 'AA', text: message.get('PID-5.2') });
}
`;

const HL7 = (id: string, pid = '123') =>
  `MSH|^~\\&|LAB|NORTH|HEARTH|CLOUD|20240101||ADT^A01|${id}|P|2.5.1\rPID|1||${pid}||DOE^JOHN`;

let t: TestApp;
let agent: TestAgent;

/** A websocket speaking the agent protocol: send, and wait for the next message matching a test. */
async function openAgentSocket(): Promise<{
  socket: WebSocket;
  send(message: AgentMessage): void;
  next(test?: (m: AgentMessage) => boolean): Promise<AgentMessage>;
}> {
  const socket = new WebSocket(new URL('ws/agent', t.baseUrl.replace('http', 'ws')));
  const received: AgentMessage[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    received.push(parseAgentMessage(data.toString()));
    waiters.splice(0).forEach((w) => w());
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    socket,
    send: (message) => socket.send(JSON.stringify(message)),
    async next(test = () => true) {
      for (;;) {
        const index = received.findIndex(test);
        if (index >= 0) {
          return received.splice(index, 1)[0];
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  agent = await createTestAgent(t, HL7_BOT);
});
afterAll(async () => {
  await t?.close();
});

describe('/ws/agent', () => {
  it('refuses a socket without a valid token, and messages before connect', async () => {
    const a = await openAgentSocket();
    a.send({ type: 'agent:heartbeat:request' });
    expect(await a.next()).toMatchObject({ type: 'agent:error', body: 'Send agent:connect:request first' });
    a.send({ type: 'agent:connect:request', accessToken: 'nope', agentId: agent.agentId });
    expect(await a.next()).toMatchObject({ type: 'agent:error', body: expect.stringMatching(/^Connect refused/) });
    a.socket.send('not json');
    a.socket.close();
  });

  it('connects, heartbeats, runs HL7 through the bot as a parsed message, answers redeliveries from the record', async () => {
    const a = await openAgentSocket();
    a.send({
      type: 'agent:connect:request',
      accessToken: agent.token,
      agentId: agent.agentId,
      version: '9.9.9',
      callback: 'c1',
    });
    expect(await a.next()).toEqual({ type: 'agent:connect:response', callback: 'c1' });
    a.send({ type: 'agent:heartbeat:request', callback: 'h1' });
    expect(await a.next()).toMatchObject({
      type: 'agent:heartbeat:response',
      version: expect.any(String),
      callback: 'h1',
    });

    const status = (await get(t, `fhir/R4/Agent/${agent.agentId}/$status`)).json() as {
      parameter: { name: string; valueCode?: string; valueString?: string }[];
    };
    expect(status.parameter).toEqual(
      expect.arrayContaining([
        { name: 'status', valueCode: 'connected' },
        { name: 'version', valueString: '9.9.9' },
      ]),
    );

    const transmit = {
      type: 'agent:transmit:request' as const,
      channel: 'adt',
      remote: '10.0.0.1:5000',
      contentType: 'x-application/hl7-v2+er7',
      body: HL7('M1'),
      callback: 'k-M1',
    };
    a.send(transmit);
    const answer = await a.next();
    expect(answer).toMatchObject({
      type: 'agent:transmit:response',
      statusCode: 200,
      callback: 'k-M1',
      contentType: 'x-application/hl7-v2+er7',
    });
    const ack = answer.type === 'agent:transmit:response' ? answer.body : '';
    expect(ack).toMatch(/^MSH\|\^~\\&\|HEARTH\|CLOUD\|LAB\|NORTH\|/);
    expect(ack).toContain('\rMSA|AA|M1|JOHN\r');

    a.send(transmit);
    expect(await a.next()).toMatchObject({ type: 'agent:transmit:response', statusCode: 200, body: ack });
    const basics = (await get(t, 'fhir/R4/Basic?_count=50')).json() as {
      entry?: { resource: { code: { text: string } } }[];
    };
    expect(basics.entry?.filter((e) => e.resource.code.text === 'M1')).toHaveLength(1);

    a.send({ ...transmit, body: HL7('M2', 'fail'), callback: 'k-M2' });
    expect(await a.next()).toMatchObject({ statusCode: 400, body: expect.stringContaining('refused by bot') });
    a.send({ ...transmit, channel: 'nope', callback: 'k-M3' });
    expect(await a.next()).toMatchObject({ statusCode: 400, body: expect.stringContaining('no channel named "nope"') });

    // $push: the server sends a transmit request down the socket and returns the agent's answer.
    const pushed = post(t, `fhir/R4/Agent/${agent.agentId}/$push`, {
      resourceType: 'Parameters',
      parameter: [
        { name: 'destination', valueString: 'mllp://10.1.1.1:2575' },
        { name: 'body', valueString: HL7('P1') },
        { name: 'contentType', valueString: 'x-application/hl7-v2+er7' },
      ],
    });
    const request = await a.next((m) => m.type === 'agent:transmit:request');
    expect(request).toMatchObject({ remote: 'mllp://10.1.1.1:2575', body: HL7('P1') });
    a.send({
      type: 'agent:transmit:response',
      remote: 'mllp://10.1.1.1:2575',
      contentType: 'x-application/hl7-v2+er7',
      body: 'ACK!',
      statusCode: 200,
      callback: request.callback,
    });
    const pushedRes = await pushed;
    expect(pushedRes.status).toBe(200);
    expect(pushedRes.text).toBe('ACK!');

    const noWait = await post(t, `fhir/R4/Agent/${agent.agentId}/$push`, {
      destination: 'mllp://h:1',
      body: 'x',
      contentType: 'text/plain',
      waitForResponse: false,
    });
    expect(noWait.status).toBe(202);
    await a.next((m) => m.type === 'agent:transmit:request' && m.body === 'x');

    const timeout = await post(t, `fhir/R4/Agent/${agent.agentId}/$push`, {
      destination: 'mllp://h:1',
      body: 'y',
      contentType: 'text/plain',
      waitTimeout: 200,
    });
    expect(timeout.status).toBe(504);

    const reload = post(t, `fhir/R4/Agent/${agent.agentId}/$reload-config`, {});
    const reloadRequest = await a.next((m) => m.type === 'agent:reloadconfig:request');
    a.send({ type: 'agent:reloadconfig:response', statusCode: 200, callback: reloadRequest.callback });
    expect((await reload).status).toBe(200);

    const bulk = (await get(t, `fhir/R4/Agent/$bulk-status?name=test`)).json() as {
      entry: { resource: { parameter: { name: string; resource: { parameter?: unknown[] } }[] } }[];
    };
    expect(bulk.entry).toHaveLength(1);
    const unselected = await get(t, `fhir/R4/Agent/$bulk-status`);
    expect(unselected.status).toBe(400);
    expect(unselected.text).toContain('selects agents by Agent search parameters');
    expect(bulk.entry[0].resource.parameter[1].resource.parameter).toContainEqual({
      name: 'status',
      valueCode: 'connected',
    });

    a.socket.close();
    await new Promise((r) => setTimeout(r, 200));
    const after = (await get(t, `fhir/R4/Agent/${agent.agentId}/$status`)).json() as { parameter: unknown[] };
    expect(after.parameter).toContainEqual({ name: 'status', valueCode: 'disconnected' });
  });

  it('runs a bot deployed again while the agent is connected with its new code, without a reload', async () => {
    const a = await openAgentSocket();
    a.send({ type: 'agent:connect:request', accessToken: agent.token, agentId: agent.agentId, callback: 'c1' });
    await a.next((m) => m.type === 'agent:connect:response');
    const transmit = (id: string) => ({
      type: 'agent:transmit:request' as const,
      channel: 'adt',
      remote: '10.0.0.1:5000',
      contentType: 'x-application/hl7-v2+er7',
      body: HL7(id),
      callback: `k-${id}`,
    });
    a.send(transmit('R1'));
    const before = await a.next((m) => m.type === 'agent:transmit:response');
    expect(before.type === 'agent:transmit:response' && before.body).toContain('\rMSA|AA|R1|JOHN\r');

    await deploy(
      t,
      agent.botId,
      `import { buildAck } from '@hearth/core';
       export async function handler(client: any, event: any) {
         return buildAck(event.input, { code: 'AE', text: 'version two' });
       }`,
    );
    // The notice of the Bot's write reaches the hub through the message bus: poll until it has.
    let after = '';
    for (let i = 0; i < 50 && !after.includes('version two'); i++) {
      a.send(transmit(`R2-${i}`));
      const answer = await a.next((m) => m.type === 'agent:transmit:response');
      after = answer.type === 'agent:transmit:response' ? (answer.body ?? '') : '';
      if (!after.includes('version two')) await new Promise((r) => setTimeout(r, 100));
    }
    expect(after).toContain('|AE|');
    expect(after).toContain('version two');
    a.socket.close();
    await deploy(t, agent.botId, HL7_BOT);
  });

  it('answers $push with 400 when the agent is not connected, and checks its parameters', async () => {
    const res = await post(t, `fhir/R4/Agent/${agent.agentId}/$push`, {
      destination: 'mllp://h:1',
      body: 'x',
      contentType: 'text/plain',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('is not connected');
    const bad = await post(t, `fhir/R4/Agent/${agent.agentId}/$push`, {
      destination: 'mllp://h:1',
      contentType: 'text/plain',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('body is required');
    const wrongTimeout = await post(t, `fhir/R4/Agent/${agent.agentId}/$push`, {
      destination: 'mllp://h:1',
      body: 'x',
      contentType: 'text/plain',
      waitTimeout: 'soon',
    });
    expect(wrongTimeout.status).toBe(400);
    const missing = await get(t, 'fhir/R4/Agent/00000000-0000-4000-8000-000000000000/$status');
    expect(missing.status).toBe(404);
  });
});
