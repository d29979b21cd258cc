// Test helpers for the agent hub: a ClientApplication for the agent, an Agent with one channel to a bot.
import type { Resource } from '@hearth/core';
import type { TestApp } from '../test/app.js';
import { createBot, deploy, post, testProjectId } from '../bots/testing.js';

export interface TestAgent {
  agentId: string;
  botId: string;
  clientId: string;
  clientSecret: string;
  token: string;
}

/** An agent whose channels (name and Endpoint address each) go to one bot running `code`. */
export async function createTestAgent(
  t: TestApp,
  code: string,
  channels: { name: string; address: string }[] = [{ name: 'adt', address: 'mllp://127.0.0.1:0' }],
): Promise<TestAgent> {
  const projectId = testProjectId(t);
  const client = (await post(t, `admin/projects/${projectId}/client`, { name: 'agent client' })).json() as {
    id: string;
    secret: string;
  };
  const bot = await createBot(t, { name: 'agent bot' });
  await deploy(t, bot.id, code);
  const repo = t.services.systemRepo(projectId);
  const channel = [];
  for (const c of channels) {
    const endpoint = (
      await repo.createResource({
        resourceType: 'Endpoint',
        status: 'active',
        address: c.address,
        connectionType: { code: 'hl7v2-mllp' },
        payloadType: [{ text: 'HL7 v2' }],
      } as Resource)
    ).resource;
    channel.push({
      name: c.name,
      endpoint: { reference: `Endpoint/${endpoint.id}` },
      targetReference: { reference: `Bot/${bot.id}` },
    });
  }
  const agent = (
    await repo.createResource({ resourceType: 'Agent', name: 'test agent', status: 'active', channel } as Resource)
  ).resource;
  const token = await clientToken(t.baseUrl, client.id, client.secret);
  return { agentId: agent.id as string, botId: bot.id, clientId: client.id, clientSecret: client.secret, token };
}

export async function clientToken(baseUrl: string, clientId: string, secret: string): Promise<string> {
  const res = await fetch(new URL('oauth2/token', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  const json = (await res.json()) as { access_token?: string };
  if (!json.access_token) {
    throw new Error(`client credentials refused: ${JSON.stringify(json)}`);
  }
  return json.access_token;
}
