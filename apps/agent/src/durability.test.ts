// kill -9 of the server while 1,000 HL7 v2 messages stream into the agent over 4 MLLP connections
// (durable acknowledgement mode); a new server process on the same database and port; every
// message reaches the bot exactly once, in order per connection. The server is the built bundle in
// a process of its own; the agent runs in this process, as it would on a site's machine, and
// outlives the server. The senders behave like an interface engine: one message at a time per
// connection, sent again when its ACK does not come in time.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Hl7Message } from '@hearth/core';
import { getFreePort } from '../../server/src/test/app.js';
import { createTestDatabase, type TestDatabase } from '../../server/src/test/db.js';
import { buildServerBundle, signInOverHttp, type ServerBundle } from '../../server/src/test/process.js';
import { NO_NODE_SNAPSHOT } from '../../server/src/platform/node-flags.js';
import { HearthAgent } from './agent.js';
import { encodeFrame, MllpDecoder } from './channels/mllp/framing.js';
import { quietLog } from './testing.js';

const MESSAGES = 1000;
const CONNECTIONS = 4;
/** The server is killed once this many messages have been acknowledged. */
const KILL_AFTER_ACKS = 300;
/** A sender sends a message again when its ACK has not come within this long (as interface engines do). */
const RESEND_AFTER_MS = 5000;
/** Everything must be acknowledged within this long of the start (a loaded machine is slow, not stuck). */
const STREAM_DEADLINE_MS = 150_000;

const ADMIN = { email: 'agent-durability@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const SYSTEM = 'urn:hearth:test:durability';

/**
 * The bot: records each message as a Basic with its control id (MSH-10), its connection and its
 * position, the number of that connection's messages recorded before it, which is its sequence
 * number exactly when every earlier message was recorded once and none later.
 *
 * The server runs the bot and then writes its delivery record (which answers a redelivery without
 * running the bot again): a kill between the two makes the agent deliver the message again and the
 * bot run a second time. So the bot is idempotent the way a real integration is: a conditional
 * create on the control id (If-None-Exist). Such a second run is also recorded, as a 'rerun' Basic,
 * so the test can say whether the window was hit.
 */
const BOT = `
import { buildAck } from '@hearth/core';
export async function handler(client: any, event: any) {
  const message = event.input;
  const id: string = message.controlId;
  const connection = id.split('-')[0];
  const byId = '${SYSTEM}:msh10|' + id;
  if (await client.searchOne('Basic', { identifier: byId })) {
    await client.createResource({
      resourceType: 'Basic',
      code: { coding: [{ system: '${SYSTEM}', code: 'rerun' }] },
      identifier: [{ system: '${SYSTEM}:rerun', value: id }],
    });
    return buildAck(message, { code: 'AA' });
  }
  const before = await client.search('Basic', { identifier: '${SYSTEM}:connection|' + connection, _summary: 'count' });
  await client.createResourceIfNoneExist(
    {
      resourceType: 'Basic',
      code: { coding: [{ system: '${SYSTEM}', code: 'received' }], text: String(before.total) },
      identifier: [
        { system: '${SYSTEM}:msh10', value: id },
        { system: '${SYSTEM}:connection', value: connection },
      ],
    },
    { identifier: byId },
  );
  return buildAck(message, { code: 'AA' });
}
`;

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;
let db: TestDatabase;
let port: number;
let baseUrl: string;
let serverDataDir: string;

beforeAll(async () => {
  bundle = await buildServerBundle('agent-durability');
  db = await createTestDatabase();
  cleanups.push(() => db.drop());
  port = await getFreePort();
  baseUrl = `http://127.0.0.1:${port}/`;
  serverDataDir = mkdtempSync(join(tmpdir(), 'hearth-durability-server-'));
  cleanups.push(() => rmSync(serverDataDir, { recursive: true, force: true }));
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

interface Server {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/**
 * The built server on this test's port, database and data directory (a restart is the same server
 * again, which its agent reconnects to), once /healthcheck answers.
 */
async function startServer(): Promise<Server> {
  const proc = spawn(process.execPath, [NO_NODE_SNAPSHOT, (bundle as ServerBundle).main], {
    cwd: resolve(import.meta.dirname, '../../..'),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HEARTH_HOST: '127.0.0.1',
      HEARTH_BASE_URL: baseUrl,
      HEARTH_DATA_DIR: serverDataDir,
      HEARTH_LOG_LEVEL: 'warn',
      DATABASE_URL: db.url,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000',
      HEARTH_RATE_LIMIT_IP_REQUESTS_PER_MINUTE: '1000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    proc.on('exit', (code, signal) => res({ code, signal })),
  );
  cleanups.push(() => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
    }
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`server exited at start: ${out}`);
    }
    const ok = await fetch(`${baseUrl}healthcheck`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) {
      return { proc, exited, output: () => out };
    }
    if (Date.now() > deadline) {
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function api<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(new URL(path, baseUrl), {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(`${method} ${path}: ${res.status} ${text}`);
  }
  return JSON.parse(text) as T;
}

/** The agent's client, the recording bot, an Endpoint for a durable MLLP channel and the Agent. */
async function setUp(token: string, mllpPort: number) {
  const me = await api<{ project: { id: string } }>(token, 'GET', 'auth/me');
  const projectId = me.project.id;
  const client = await api<{ id: string; secret: string }>(token, 'POST', `admin/projects/${projectId}/client`, {
    name: 'durability agent client',
  });
  const bot = await api<{ id: string }>(token, 'POST', `admin/projects/${projectId}/bot`, { name: 'recorder' });
  await api(token, 'POST', `fhir/R4/Bot/${bot.id}/$deploy`, { code: BOT, filename: 'index.ts' });
  const endpoint = await api<{ id: string }>(token, 'POST', 'fhir/R4/Endpoint', {
    resourceType: 'Endpoint',
    status: 'active',
    address: `mllp://127.0.0.1:${mllpPort}?ackMode=durable`,
    connectionType: { code: 'hl7v2-mllp' },
    payloadType: [{ text: 'HL7 v2' }],
  });
  const agent = await api<{ id: string }>(token, 'POST', 'fhir/R4/Agent', {
    resourceType: 'Agent',
    name: 'durability agent',
    status: 'active',
    channel: [
      {
        name: 'adt',
        endpoint: { reference: `Endpoint/${endpoint.id}` },
        targetReference: { reference: `Bot/${bot.id}` },
      },
    ],
  });
  return { agentId: agent.id, clientId: client.id, clientSecret: client.secret };
}

function message(id: string): string {
  const connection = id.split('-')[0];
  return `MSH|^~\\&|LAB|NORTH|HEARTH|CLOUD|20240101||ADT^A01|${id}|P|2.5.1\rPID|1||${connection}||DOE^JOHN\r`;
}

/** Counts of what the senders saw, for the log line and the checks. */
const stats = { acks: 0, resends: 0, duplicateAcks: 0, reconnects: 0 };

/**
 * One sender connection, as an interface engine's: sends its messages in order, one at a time, and
 * moves on when the ACK naming it (MSA-2) arrives; sends it again when that takes over
 * RESEND_AFTER_MS, and reconnects when the connection drops. ACKs of copies sent earlier are ignored.
 */
class Sender {
  private socket?: Socket;
  private decoder = new MllpDecoder();
  private waiting?: { id: string; resolve(): void; reject(err: Error): void };

  constructor(
    private readonly mllpPort: number,
    readonly ids: string[],
    private readonly onAck: () => void,
  ) {}

  async run(): Promise<void> {
    for (const id of this.ids) {
      await this.deliver(id);
      this.onAck();
    }
    this.socket?.destroy();
  }

  private async open(): Promise<Socket> {
    if (this.socket && !this.socket.destroyed) {
      return this.socket;
    }
    const socket = connect({ host: '127.0.0.1', port: this.mllpPort });
    await new Promise((res, rej) => socket.once('connect', res).once('error', rej));
    this.decoder = new MllpDecoder();
    socket.on('data', (chunk) => {
      for (const frame of this.decoder.push(chunk)) {
        this.onAnswer(frame.toString('utf8'));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket === socket) {
        this.socket = undefined;
      }
    });
    this.socket = socket;
    return socket;
  }

  private onAnswer(text: string): void {
    const ack = Hl7Message.parse(text);
    const about = ack.get('MSA-2');
    if (!this.waiting || about !== this.waiting.id) {
      stats.duplicateAcks++;
      return;
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    if (ack.get('MSA-1') === 'AA') {
      waiting.resolve();
    } else {
      waiting.reject(new Error(`${about} answered ${ack.get('MSA-1')}: ${ack.get('MSA-3')}`));
    }
  }

  private async deliver(id: string): Promise<void> {
    const acknowledged = new Promise<void>((res, rej) => {
      this.waiting = { id, resolve: res, reject: rej };
    });
    let first = true;
    for (;;) {
      const socket = await this.open().catch(() => undefined);
      if (socket) {
        if (!first) {
          stats.resends++;
        }
        socket.write(encodeFrame(message(id)));
        first = false;
      } else {
        stats.reconnects++;
      }
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        acknowledged.then(() => 'acked' as const),
        new Promise<'timeout'>((res) => {
          timer = setTimeout(() => res('timeout'), RESEND_AFTER_MS);
        }),
      ]).finally(() => clearTimeout(timer));
      if (outcome === 'acked') {
        return;
      }
    }
  }
}

interface Recorded {
  id: string;
  connection: string;
  position: number;
}

/** Every Basic of the given code the bot wrote, through the search's next links. */
async function recorded(token: string, code: string): Promise<Recorded[]> {
  const out: Recorded[] = [];
  let url: string | undefined = `fhir/R4/Basic?code=${encodeURIComponent(`${SYSTEM}|${code}`)}&_count=500`;
  while (url) {
    const page: {
      entry?: { resource: { identifier: { system: string; value: string }[]; code: { text?: string } } }[];
      link?: { relation: string; url: string }[];
    } = await api(token, 'GET', url);
    for (const { resource } of page.entry ?? []) {
      const value = (system: string) => resource.identifier.find((i) => i.system === system)?.value ?? '';
      out.push({
        id: value(`${SYSTEM}:${code === 'rerun' ? 'rerun' : 'msh10'}`),
        connection: value(`${SYSTEM}:connection`),
        position: Number(resource.code.text),
      });
    }
    url = page.link?.find((l) => l.relation === 'next')?.url;
  }
  return out;
}

describe('agent durability across a server crash', () => {
  it(`delivers ${MESSAGES} MLLP messages over ${CONNECTIONS} connections exactly once, in order, through a kill -9 of the server`, async () => {
    let server = await startServer();
    onTestFailed(() => console.log(`server output:\n${server.output()}`));
    const mllpPort = await getFreePort();
    const ids = await setUp(await signInOverHttp(baseUrl, ADMIN), mllpPort);
    const agentDir = mkdtempSync(join(tmpdir(), 'hearth-durability-agent-'));
    cleanups.push(() => rmSync(agentDir, { recursive: true, force: true }));
    const agent = new HearthAgent({ baseUrl, ...ids, dataDir: agentDir, heartbeatMs: 5000 }, quietLog);
    cleanups.push(() => agent.stop());
    await agent.start();
    expect([...agent.runningChannels().keys()]).toEqual(['adt']);

    const started = Date.now();
    let killAt = 0;
    let onKillMoment: () => void = () => undefined;
    const killMoment = new Promise<void>((res) => (onKillMoment = res));
    const senders = Array.from(
      { length: CONNECTIONS },
      (_, c) =>
        new Sender(
          mllpPort,
          Array.from({ length: MESSAGES / CONNECTIONS }, (_, i) => `C${c + 1}-${String(i).padStart(4, '0')}`),
          () => {
            stats.acks++;
            if (stats.acks === KILL_AFTER_ACKS) {
              onKillMoment();
            }
          },
        ),
    );
    const streamed = Promise.all(senders.map((s) => s.run()));
    let deadline: NodeJS.Timeout | undefined;
    const all = Promise.race([
      streamed,
      new Promise<never>((_, rej) => {
        deadline = setTimeout(
          () => rej(new Error(`only ${stats.acks} of ${MESSAGES} acknowledged in ${STREAM_DEADLINE_MS} ms`)),
          STREAM_DEADLINE_MS,
        );
      }),
    ]).finally(() => clearTimeout(deadline));
    // A sender's failure (an AE, say) fails the test at once, not at the deadline.
    all.catch(() => onKillMoment());

    await killMoment;
    killAt = stats.acks;
    server.proc.kill('SIGKILL');
    expect((await server.exited).signal).toBe('SIGKILL');
    const killedAfterMs = Date.now() - started;
    server = await startServer();
    const restartedAfterMs = Date.now() - started;
    await all;
    const doneAfterMs = Date.now() - started;

    const token = await signInOverHttp(baseUrl, ADMIN);
    const received = await recorded(token, 'received');
    const reruns = await recorded(token, 'rerun');
    console.log(
      `agent durability: killed after ${killAt} ACKs at ${killedAfterMs} ms, server up again at ${restartedAfterMs} ms, ` +
        `all ${stats.acks} acknowledged at ${doneAfterMs} ms; ${stats.resends} resends, ${stats.duplicateAcks} duplicate ACKs ignored, ` +
        `${reruns.length} bot reruns in the crash window (${reruns.map((r) => r.id).join(', ') || 'none'}), ` +
        `${received.length} messages recorded`,
    );
    expect(killAt).toBeLessThan(MESSAGES);
    expect(stats.acks).toBe(MESSAGES);

    // Exactly once: each control id recorded one time, all 1,000 of them.
    const counts = new Map<string, number>();
    for (const r of received) {
      counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
    }
    expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
    expect(new Set(counts.keys())).toEqual(new Set(senders.flatMap((s) => s.ids)));

    // In order per connection: each message's position (the connection's records before it) is its sequence number.
    for (const sender of senders) {
      const connection = sender.ids[0].split('-')[0];
      const positions = new Map(received.filter((r) => r.connection === connection).map((r) => [r.id, r.position]));
      const outOfOrder = sender.ids.map((id, seq) => ({ id, seq, position: positions.get(id) }));
      expect(outOfOrder.filter((o) => o.position !== o.seq)).toEqual([]);
    }

    // The agent's queue has nothing left to deliver.
    expect(agent.queue.pendingCount()).toBe(0);
  }, 240_000);
});
