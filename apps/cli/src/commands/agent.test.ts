/**
 * The built CLI's agent commands against a running server and a real hearth-agent connected to it:
 * status (connected, version, channels), list through $bulk-status, and push through the agent
 * to an MLLP server from npm (inline body, a file, without waiting, failures and exit codes).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error mllp-node ships no types
import mllp from 'mllp-node';
import type { Resource } from '@hearth/core';
import { createTestApp, getFreePort, type TestApp } from '../../../server/src/test/app.js';
import { createTestAgent, type TestAgent } from '../../../server/src/agent/testing.js';
import { testProjectId } from '../../../server/src/bots/testing.js';
import { AGENT_VERSION, HearthAgent } from '../../../agent/src/agent.js';
import { hl7, quietLog } from '../../../agent/src/testing.js';
import { ensureCliBuilt, runCli, tempHome } from '../test/cli.test-util.js';

const BOT = `
import { buildAck } from '@hearth/core';
export async function handler(client: any, event: any) {
  return buildAck(event.input, { code: 'AA' });
}
`;
const HL7 = 'x-application/hl7-v2+er7';

let t: TestApp;
let home: ReturnType<typeof tempHome>;
let testAgent: TestAgent;
let agent: HearthAgent;
let dataDir: string;
let channelPort: number;
let idleAgentId: string;
/** A server that accepts connections and never answers (for --timeout). */
let silent: Server;
let silentPort: number;
const silentSockets = new Set<Socket>();

beforeAll(async () => {
  await ensureCliBuilt();
  t = await createTestApp({ listen: true });
  channelPort = await getFreePort();
  testAgent = await createTestAgent(t, BOT, [{ name: 'adt', address: `mllp://127.0.0.1:${channelPort}` }]);
  const idle = await t.services
    .systemRepo(testProjectId(t))
    .createResource({ resourceType: 'Agent', name: 'idle agent', status: 'off' } as Resource);
  idleAgentId = idle.resource.id as string;
  dataDir = mkdtempSync(join(tmpdir(), 'hearth-cli-agent-'));
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
  silentPort = await getFreePort();
  silent = createServer((socket) => {
    silentSockets.add(socket);
    socket.on('close', () => silentSockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(silentPort, '127.0.0.1', resolve));
  home = tempHome();
  const { email, password } = t.testProject;
  const login = await hearth(['login', '--email', email, '--password', password]);
  expect(login.code, login.stderr).toBe(0);
});

afterAll(async () => {
  await agent?.stop();
  // The agent's own send to it (the --timeout test) may still wait for its answer: closed here.
  for (const socket of silentSockets) {
    socket.destroy();
  }
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  await t?.close();
  home?.remove();
  if (dataDir) {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

function hearth(args: string[]) {
  return runCli(args, { home: home.home, env: { HEARTH_BASE_URL: t.baseUrl } });
}

/** An MLLP server from npm that answers AA, and the next message it receives. */
async function mllpServer(): Promise<{ address: string; received: Promise<string> }> {
  const port = await getFreePort();
  const server = new mllp.MLLPServer('127.0.0.1', port, () => undefined);
  const received = new Promise<string>((resolve) => server.on('hl7', resolve));
  return { address: `mllp://127.0.0.1:${port}`, received };
}

describe('hearth agent status', () => {
  it('shows a running agent connected, with its version, last heartbeat and channels', async () => {
    const result = await hearth(['agent', 'status', testAgent.agentId]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^status\s+connected$/m);
    expect(result.stdout).toMatch(new RegExp(`^version\\s+${AGENT_VERSION.replace(/\./g, '\\.')}$`, 'm'));
    expect(result.stdout).toMatch(/^last heartbeat\s+\d{4}-\d\d-\d\dT/m);
    expect(result.stdout).toMatch(
      new RegExp(`^adt\\s+mllp://127\\.0\\.0\\.1:${channelPort}\\s+Bot/${testAgent.botId}$`, 'm'),
    );

    const json = await hearth(['agent', 'status', testAgent.agentId, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      id: testAgent.agentId,
      name: 'test agent',
      agentStatus: 'active',
      status: 'connected',
      version: AGENT_VERSION,
      channels: [{ name: 'adt', address: `mllp://127.0.0.1:${channelPort}`, target: `Bot/${testAgent.botId}` }],
    });
  });

  it('shows an agent that never connected as disconnected, and an unknown one fails with exit code 1', async () => {
    const idle = await hearth(['agent', 'status', idleAgentId]);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stdout).toMatch(/^status\s+disconnected$/m);
    expect(idle.stdout).toContain('No channels');

    const unknown = await hearth(['agent', 'status', 'no-such-agent']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('HTTP 404');
  });
});

describe('hearth agent list', () => {
  it('lists every agent with its status, version and last heartbeat', async () => {
    const result = await hearth(['agent', 'list']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+status\s+version\s+last heartbeat$/);
    const running = lines.find((l) => l.startsWith(testAgent.agentId));
    expect(running).toMatch(
      new RegExp(`\\stest agent\\s+connected\\s+${AGENT_VERSION.replace(/\./g, '\\.')}\\s+\\d{4}-`),
    );
    expect(lines.find((l) => l.startsWith(idleAgentId))).toMatch(/\sidle agent\s+disconnected\s+-\s+-$/);
    expect(result.stderr).toContain('2 agents, 1 connected');
  });

  it('takes Agent search parameters, and prints the Bundle with --json', async () => {
    const result = await hearth(['agent', 'list', 'name=idle']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(idleAgentId);
    expect(result.stdout).not.toContain(testAgent.agentId);

    const json = await hearth(['agent', 'list', 'status=active', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const bundle = JSON.parse(json.stdout) as {
      resourceType: string;
      entry: { resource: { parameter: { name: string; resource: { id?: string; parameter?: unknown[] } }[] } }[];
    };
    expect(bundle.resourceType).toBe('Bundle');
    expect(bundle.entry).toHaveLength(1);
    const [agentParam, result2] = bundle.entry[0].resource.parameter;
    expect(agentParam.resource.id).toBe(testAgent.agentId);
    expect(result2.resource.parameter).toContainEqual({ name: 'status', valueCode: 'connected' });

    const none = await hearth(['agent', 'list', 'name=nobody-has-this-name']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('No agents match');
  });
});

describe('hearth agent push', () => {
  it('sends an inline HL7 message through the agent to an npm MLLP server and prints its ACK', async () => {
    const remote = await mllpServer();
    const result = await hearth([
      'agent',
      'push',
      testAgent.agentId,
      '--destination',
      remote.address,
      '--channel',
      'adt',
      '--content-type',
      HL7,
      '--body',
      hl7('CLI1'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(await remote.received).toContain('|CLI1|');
    // The ACK's segments, one per line.
    expect(result.stdout).toMatch(/^MSH\|/);
    expect(result.stdout).toContain('\nMSA|AA|CLI1');
  });

  it('reads the message from a file (line breaks made segment separators, content type from the name)', async () => {
    const remote = await mllpServer();
    const file = join(home.home, 'message.hl7');
    writeFileSync(file, hl7('CLI2').replace(/\r/g, '\n'));
    const result = await hearth(['agent', 'push', testAgent.agentId, '--destination', remote.address, '--file', file]);
    expect(result.code, result.stderr).toBe(0);
    const received = await remote.received;
    expect(received).toContain('|CLI2|P|2.5.1\rPID|1||CLI2');
    expect(received).not.toContain('\n');
    expect(result.stdout).toContain('MSA|AA|CLI2');
  });

  it('with --no-wait answers once the agent has the message', async () => {
    const remote = await mllpServer();
    const result = await hearth([
      'agent',
      'push',
      testAgent.agentId,
      '--destination',
      remote.address,
      '--content-type',
      HL7,
      '--body',
      hl7('CLI3'),
      '--no-wait',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`Agent/${testAgent.agentId} has the message for ${remote.address}`);
    expect(await remote.received).toContain('|CLI3|');
  });

  it('fails with exit code 1 when the destination refuses, does not answer in --timeout, or the agent is offline', async () => {
    const refused = await hearth([
      'agent',
      'push',
      testAgent.agentId,
      '--destination',
      `mllp://127.0.0.1:${await getFreePort()}`,
      '--content-type',
      HL7,
      '--body',
      hl7('CLI4'),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Agent/${testAgent.agentId} could not deliver to mllp://127.0.0.1:`);
    expect(refused.stderr).toContain('ECONNREFUSED');

    const silentResult = await hearth([
      'agent',
      'push',
      testAgent.agentId,
      '--destination',
      `mllp://127.0.0.1:${silentPort}`,
      '--content-type',
      HL7,
      '--body',
      hl7('CLI5'),
      '--timeout',
      '300',
    ]);
    expect(silentResult.code).toBe(1);
    expect(silentResult.stderr).toContain(`No answer from mllp://127.0.0.1:${silentPort}`);
    expect(silentResult.stderr).toContain('within 300 ms');

    const offline = await hearth([
      'agent',
      'push',
      idleAgentId,
      '--destination',
      'mllp://127.0.0.1:2575',
      '--content-type',
      HL7,
      '--body',
      hl7('CLI6'),
    ]);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain('is not connected');
  });

  it('refuses bad options before sending anything', async () => {
    const base = ['agent', 'push', testAgent.agentId, '--destination', 'mllp://127.0.0.1:2575'];
    const neither = await hearth([...base, '--content-type', HL7]);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain('either --body <text> or --file <path>');

    const noType = await hearth([...base, '--body', 'hello']);
    expect(noType.code).toBe(1);
    expect(noType.stderr).toContain('--content-type is required');

    const badTimeout = await hearth([...base, '--content-type', HL7, '--body', hl7('X'), '--timeout', '90000']);
    expect(badTimeout.code).toBe(1);
    expect(badTimeout.stderr).toContain('--timeout must be a number of milliseconds from 1 to 60000');

    const noDestination = await hearth(['agent', 'push', testAgent.agentId, '--body', 'x']);
    expect(noDestination.code).not.toBe(0);
    expect(noDestination.stderr).toContain("required option '--destination <address>' not specified");
  });
});
