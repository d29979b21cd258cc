// The agent against a real server: MLLP in (a client library from npm and raw sockets), the bot,
// the ACK out, in both acknowledgement modes; $push out to an MLLP server from npm; reload.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error mllp-node ships no types
import mllp from 'mllp-node';
import { Hl7Message } from '@hearth/core';
import { createTestApp, getFreePort, type TestApp } from '../../server/src/test/app.js';
import { createTestAgent, type TestAgent } from '../../server/src/agent/testing.js';
import { get, post, waitFor } from '../../server/src/bots/testing.js';
import { HearthAgent } from './agent.js';
import { encodeFrame } from './channels/mllp/framing.js';
import { hl7, mllpClient, quietLog } from './testing.js';

const BOT = `
import { buildAck } from '@hearth/core';
export async function handler(client: any, event: any) {
  const message = event.input;
  if (message.get('PID-3').includes('fail')) throw new Error('bot refused ' + message.controlId);
  await client.createResource({ resourceType: 'Basic', code: { text: message.controlId } });
  return buildAck(message, { code: 'AA', text: 'stored by bot' });
}
`;

let t: TestApp;
let testAgent: TestAgent;
let agent: HearthAgent;
let dataDir: string;
let immediatePort: number;
let durablePort: number;

async function recorded(id: string): Promise<number> {
  const bundle = (await get(t, `fhir/R4/Basic?code:text=${id}&_count=10`)).json() as { entry?: unknown[] };
  return bundle.entry?.length ?? 0;
}

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  immediatePort = await getFreePort();
  durablePort = await getFreePort();
  testAgent = await createTestAgent(t, BOT, [
    { name: 'immediate', address: `mllp://127.0.0.1:${immediatePort}` },
    { name: 'durable', address: `mllp://127.0.0.1:${durablePort}?ackMode=durable` },
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'hearth-agent-'));
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
});

afterAll(async () => {
  await agent?.stop();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('hearth-agent over MLLP', () => {
  it('starts the channels of its Agent and reports connected', async () => {
    expect([...agent.runningChannels().keys()].sort()).toEqual(['durable', 'immediate']);
    const status = (await get(t, `fhir/R4/Agent/${testAgent.agentId}/$status`)).json() as { parameter: unknown[] };
    expect(status.parameter).toContainEqual({ name: 'status', valueCode: 'connected' });
  });

  it('durable mode: an npm MLLP client gets the bot’s ACK once the bot has stored the message', async () => {
    const sender = new mllp.MLLPServer('127.0.0.1', await getFreePort(), () => undefined);
    const msa = await new Promise<string>((resolve, reject) =>
      sender.send('127.0.0.1', durablePort, hl7('D1').replace(/\r$/, ''), (err: Error | null, ack: string) =>
        err ? reject(err) : resolve(ack),
      ),
    );
    expect(msa).toBe('MSA|AA|D1|stored by bot');
    expect(await recorded('D1')).toBe(1);
  });

  it('durable mode: several messages on one connection, frames split across packets, answered in order', async () => {
    const client = await mllpClient(durablePort);
    const bytes = Buffer.concat(['D2', 'D3', 'D4'].map((id) => encodeFrame(hl7(id))));
    for (let i = 0; i < bytes.length; i += 7) {
      client.write(bytes.subarray(i, i + 7));
      await new Promise((r) => setTimeout(r, 1));
    }
    const acks = [await client.nextAnswer(), await client.nextAnswer(), await client.nextAnswer()];
    expect(acks.map((a) => Hl7Message.parse(a).get('MSA-2'))).toEqual(['D2', 'D3', 'D4']);
    // Sent again (the sender missed the ACK): the same answer, and the bot does not run again.
    const again = await client.send(hl7('D3'));
    expect(Hl7Message.parse(again).get('MSA-1')).toBe('AA');
    expect(Hl7Message.parse(again).get('MSA-2')).toBe('D3');
    expect(await recorded('D3')).toBe(1);
    // The bot refuses: AE with its reason.
    const refused = Hl7Message.parse(await client.send(hl7('D5', 'fail')));
    expect(refused.get('MSA-1')).toBe('AE');
    expect(refused.get('MSA-3')).toContain('bot refused D5');
    // Not HL7 at all: AR.
    expect(Hl7Message.parse(await client.send('hello')).get('MSA-1')).toBe('AR');
    client.close();
  });

  it('immediate mode: ACK built by the agent at once, the message reaches the bot after', async () => {
    const client = await mllpClient(immediatePort);
    const ack = Hl7Message.parse(await client.send(hl7('I1')));
    expect(ack.get('MSA-1')).toBe('AA');
    expect(ack.get('MSH-3')).toBe('HEARTH');
    expect(ack.get('MSH-5')).toBe('LAB');
    await waitFor(async () => (await recorded('I1')) === 1 || undefined);
    client.close();
  });

  it('$push sends through the agent to an npm MLLP server and returns its ACK', async () => {
    const port = await getFreePort();
    const remote = new mllp.MLLPServer('127.0.0.1', port, () => undefined);
    const received = new Promise<string>((resolve) => remote.on('hl7', resolve));
    const res = await post(t, `fhir/R4/Agent/${testAgent.agentId}/$push`, {
      destination: `mllp://127.0.0.1:${port}`,
      body: hl7('P1'),
      contentType: 'x-application/hl7-v2+er7',
    });
    expect(res.status).toBe(200);
    expect(await received).toContain('|P1|');
    expect(Hl7Message.parse(res.text).get('MSA-2')).toBe('P1');
    const unreachable = await post(t, `fhir/R4/Agent/${testAgent.agentId}/$push`, {
      destination: `mllp://127.0.0.1:${await getFreePort()}`,
      body: hl7('P2'),
      contentType: 'x-application/hl7-v2+er7',
    });
    expect(unreachable.status).toBe(502);
    expect(unreachable.text).toContain('ECONNREFUSED');
    expect(agent.queue.pushes()).toEqual([]);
  });

  it('$reload-config restarts a channel whose address changed', async () => {
    const agentResource = (await get(t, `fhir/R4/Agent/${testAgent.agentId}`)).json() as {
      channel: { name: string; endpoint: { reference: string } }[];
    };
    const endpointRef = agentResource.channel.find((c) => c.name === 'immediate')!.endpoint.reference;
    const endpoint = (await get(t, `fhir/R4/${endpointRef}`)).json() as Record<string, unknown>;
    const newPort = await getFreePort();
    const put = await fetch(new URL(`fhir/R4/${endpointRef}`, t.baseUrl), {
      method: 'PUT',
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ ...endpoint, address: `mllp://127.0.0.1:${newPort}` }),
    });
    expect(put.status).toBe(200);
    const res = await post(t, `fhir/R4/Agent/${testAgent.agentId}/$reload-config`, {});
    expect(res.status).toBe(200);
    const client = await mllpClient(newPort);
    expect(Hl7Message.parse(await client.send(hl7('R1'))).get('MSA-1')).toBe('AA');
    client.close();
  });
});
