/**
 * `npm run bench -- --only agent-mllp [--seconds N] [--runs N]`: HL7 v2 over MLLP end to end
 * through hearth-agent (socket in, the agent's on-disk queue, the websocket, the channel's bot on
 * the server, the ACK out), with 4 sender connections and a trivial bot (it answers the ACK).
 *
 * Starts the built server on its own embedded PostgreSQL and the built agent (apps/agent/dist) as a
 * process of its own, so that its memory is its own: its peak RSS (VmHWM) and CPU time per message
 * are read from /proc. Each connection sends one message and waits for its ACK, then the next (a
 * closed loop), for N seconds per run, in each acknowledgement mode:
 *
 * - immediate: the agent ACKs once the message is in its queue; the bot runs after. The ACK rate
 *   and latency are the agent's. Messages acknowledged faster than the server runs the bot wait in
 *   the agent's queue (the backlog, reported): the end-to-end rate is a run's messages over the time
 *   until the server has recorded the bot run of the last of them (its agent_delivery rows).
 * - durable: the ACK is the bot's answer, so every ACK is end to end (no backlog).
 *
 * The machine's load average is printed with the figures: other work on it moves them.
 *
 * The issue's target: ≥ 300 msg/s end to end with p95 ACK latency < 50 ms in immediate mode.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { encodeFrame, MllpDecoder } from '../../apps/agent/src/channels/mllp/framing.js';
import { signIn } from './auth.js';
import { median } from './load.js';
import { freePort, processCpuMs, startServer } from './server.js';

const CONNECTIONS = 4;
const TARGET_RATE = 300;
const TARGET_P95_MS = 50;
const AGENT_MAIN = process.env.HEARTH_BENCH_AGENT || 'apps/agent/dist/main.js';
/** A backlog left by an immediate-mode run must be through the bot within this long. */
const DRAIN_TIMEOUT_MS = 600_000;

const BOT = `
import { buildAck } from '@hearth/core';
export async function handler(client: any, event: any) {
  return buildAck(event.input, { code: 'AA' });
}
`;

type Mode = 'immediate' | 'durable';

interface RunResult {
  /** Messages acknowledged per second. */
  ackRate: number;
  /** Messages per second from the first sent until the last one's bot run was recorded. */
  e2eRate: number;
  p50: number;
  p95: number;
  p99: number;
  sent: number;
  /** Acknowledged but not yet through the bot when the senders stopped. */
  backlog: number;
  drainMs: number;
  errors: number;
  firstError?: string;
}

interface Agent {
  proc: ChildProcess;
  /** Peak resident memory so far (VmHWM), and now (VmRSS), in MB. */
  memoryMb(): { peak: number; now: number } | undefined;
  cpuMs(): number | undefined;
  stop(): Promise<void>;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

async function api<T>(
  baseUrl: string,
  headers: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(new URL(path, baseUrl), {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(`${method} ${path}: ${res.status} ${text}`);
  }
  return JSON.parse(text) as T;
}

/** The agent's client, the bot, and an Agent with one MLLP channel per acknowledgement mode. */
async function setUp(baseUrl: string, headers: Record<string, string>, ports: Record<Mode, number>) {
  const me = await api<{ project: { id: string } }>(baseUrl, headers, 'GET', 'auth/me');
  const projectId = me.project.id;
  const client = await api<{ id: string; secret: string }>(
    baseUrl,
    headers,
    'POST',
    `admin/projects/${projectId}/client`,
    { name: 'bench agent' },
  );
  const bot = await api<{ id: string }>(baseUrl, headers, 'POST', `admin/projects/${projectId}/bot`, {
    name: 'bench ACK bot',
  });
  await api(baseUrl, headers, 'POST', `fhir/R4/Bot/${bot.id}/$deploy`, { code: BOT, filename: 'index.ts' });
  const channel = [];
  for (const mode of ['immediate', 'durable'] as const) {
    const endpoint = await api<{ id: string }>(baseUrl, headers, 'POST', 'fhir/R4/Endpoint', {
      resourceType: 'Endpoint',
      status: 'active',
      address: `mllp://127.0.0.1:${ports[mode]}?ackMode=${mode}`,
      connectionType: { code: 'hl7v2-mllp' },
      payloadType: [{ text: 'HL7 v2' }],
    });
    channel.push({
      name: mode,
      endpoint: { reference: `Endpoint/${endpoint.id}` },
      targetReference: { reference: `Bot/${bot.id}` },
    });
  }
  const agent = await api<{ id: string }>(baseUrl, headers, 'POST', 'fhir/R4/Agent', {
    resourceType: 'Agent',
    name: 'bench agent',
    status: 'active',
    channel,
  });
  return { agentId: agent.id, clientId: client.id, clientSecret: client.secret };
}

/** hearth-agent as its own process; resolves once it has started its channels. */
async function startAgent(baseUrl: string, ids: { agentId: string; clientId: string; clientSecret: string }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-agent-'));
  const proc = spawn(process.execPath, [AGENT_MAIN, baseUrl, ids.agentId, ids.clientId, '--data-dir', dataDir], {
    env: { ...process.env, HEARTH_AGENT_CLIENT_SECRET: ids.clientSecret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const started = new Promise<void>((ok, fail) => {
    const onData = (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
      if (/"message":"started"/.test(output)) {
        proc.stdout?.off('data', onData);
        ok();
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-8000)));
    proc.once('exit', (code) => fail(new Error(`the agent exited with ${code}:\n${output}`)));
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    started,
    new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`the agent did not start:\n${output}`)), 60_000);
    }),
  ]).finally(() => clearTimeout(timer));
  const pid = proc.pid as number;
  const agent: Agent = {
    proc,
    memoryMb() {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]);
        return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
      } catch {
        return undefined;
      }
    },
    cpuMs: () => processCpuMs(pid),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGKILL');
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return agent;
}

/** One sender connection: a message, its ACK, the next. */
class Sender {
  private readonly decoder = new MllpDecoder();
  private waiter?: (text: string) => void;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk) => {
      for (const frame of this.decoder.push(chunk)) {
        const waiter = this.waiter;
        this.waiter = undefined;
        waiter?.(frame.toString('utf8'));
      }
    });
  }

  static async open(port: number): Promise<Sender> {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setNoDelay(true);
    await new Promise((ok, fail) => socket.once('connect', ok).once('error', fail));
    return new Sender(socket);
  }

  send(text: string): Promise<string> {
    return new Promise((ok, fail) => {
      const onClose = () => fail(new Error('the agent closed the connection'));
      this.socket.once('close', onClose);
      this.waiter = (answer) => {
        this.socket.off('close', onClose);
        ok(answer);
      };
      this.socket.write(encodeFrame(text));
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

let messageNumber = 0;

/** An ADT^A01 with a control id never used before (the agent treats a repeated MSH-10 as a resend). */
function adt(): string {
  const id = `B${process.pid}-${++messageNumber}`;
  return (
    `MSH|^~\\&|LAB|NORTH|HEARTH|CLOUD|20240101120000||ADT^A01^ADT_A01|${id}|P|2.5.1\r` +
    `EVN|A01|20240101120000\r` +
    `PID|1||MRN${messageNumber}^^^NORTH^MR||DOE^JOHN^Q||19700412|M|||1 ELM ST^^PROVIDENCE^RI^02903\r` +
    `PV1|1|I|WARD^101^A\r`
  );
}

/** The bot runs the server has recorded for the agent (one row per message delivered). */
async function deliveredCount(db: pg.Client, agentId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_delivery WHERE agent_id = $1', [
    agentId,
  ]);
  return rows[0].n;
}

/** Waits until every message sent so far has been through the bot. */
async function drain(db: pg.Client, agentId: string, total: number): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while ((await deliveredCount(db, agentId)) < total) {
    if (Date.now() > deadline) {
      throw new Error(`the agent's queue did not drain within ${DRAIN_TIMEOUT_MS} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** 4 connections, each in a closed loop for `seconds`. */
async function runOnce(
  port: number,
  seconds: number,
  db: pg.Client,
  agentId: string,
  sentBefore: number,
): Promise<RunResult> {
  const senders = await Promise.all(Array.from({ length: CONNECTIONS }, () => Sender.open(port)));
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    senders.map(async (sender) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          const ack = await sender.send(adt());
          const code = /\rMSA\|([A-Z]{2})/.exec(ack)?.[1];
          if (code !== 'AA') {
            throw new Error(`ACK ${code ?? 'unreadable'}: ${ack.slice(0, 200)}`);
          }
          latencies.push(performance.now() - started);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
          if (/closed/.test((err as Error).message)) {
            return;
          }
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const deliveredAfter = await deliveredCount(db, agentId);
  for (const sender of senders) {
    sender.close();
  }
  // Acknowledged AA: each is a message the server will run the bot for (a refused one may never be).
  const sent = latencies.length;
  const drainStart = performance.now();
  await drain(db, agentId, sentBefore + sent);
  const throughBot = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ackRate: latencies.length / elapsed,
    e2eRate: sent / throughBot,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    sent,
    backlog: sentBefore + sent - deliveredAfter,
    drainMs: performance.now() - drainStart,
    errors,
    firstError,
  };
}

interface ModeResult {
  mode: Mode;
  runs: RunResult[];
  ackRate: number;
  e2eRate: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  agentCpuMsPerMessage: number;
  serverCpuMsPerMessage: number;
  agentPeakMb?: number;
}

export async function runAgentMllpBench(
  admin: { email: string; password: string },
  options: { seconds: number; runs: number },
  log: (message: string) => void,
): Promise<void> {
  const loadAtStart = loadavg()[0];
  log('agent-mllp: starting the server on a private embedded PostgreSQL...');
  const server = await startServer(admin, { label: 'agent-mllp' });
  const db = new pg.Client({ connectionString: server.databaseUrl });
  let agent: Agent | undefined;
  try {
    await db.connect();
    const headers = await signIn(server.baseUrl, admin.email, admin.password);
    const ports = { immediate: await freePort(), durable: await freePort() };
    const ids = await setUp(server.baseUrl, headers, ports);
    log(`agent-mllp: starting hearth-agent (${resolve(AGENT_MAIN)}) as its own process...`);
    agent = await startAgent(server.baseUrl, ids);
    let sent = 0;
    const results: ModeResult[] = [];
    for (const mode of ['immediate', 'durable'] as const) {
      // One unmeasured second first: connections, the bot's first runs, JIT.
      const warm = await runOnce(ports[mode], 1, db, ids.agentId, sent);
      sent += warm.sent;
      const runs: RunResult[] = [];
      const cpuBefore = agent.cpuMs();
      const serverCpuBefore = server.cpuMs();
      let messages = 0;
      for (let r = 0; r < options.runs; r++) {
        const res = await runOnce(ports[mode], options.seconds, db, ids.agentId, sent);
        sent += res.sent;
        messages += res.sent;
        runs.push(res);
        log(
          `  ${mode} run ${r + 1}: ${fmt(res.e2eRate)} msg/s end to end, ${fmt(res.ackRate)} ACK/s, ` +
            `ACK p50 ${fmt(res.p50, 1)} ms p95 ${fmt(res.p95, 1)} ms p99 ${fmt(res.p99, 1)} ms, ` +
            `${res.sent} messages, backlog ${res.backlog} (through the bot ${fmt(res.drainMs)} ms later), ` +
            `errors ${res.errors}${res.firstError ? ` (${res.firstError})` : ''}`,
        );
      }
      const cpuAfter = agent.cpuMs();
      const serverCpuAfter = server.cpuMs();
      const perMessage = (before: number | undefined, after: number | undefined) =>
        before !== undefined && after !== undefined && messages > 0 ? (after - before) / messages : NaN;
      results.push({
        mode,
        runs,
        ackRate: median(runs.map((r) => r.ackRate)),
        e2eRate: median(runs.map((r) => r.e2eRate)),
        p50: median(runs.map((r) => r.p50)),
        p95: median(runs.map((r) => r.p95)),
        p99: median(runs.map((r) => r.p99)),
        errors: runs.reduce((a, r) => a + r.errors, 0),
        // The drain after each run is inside the window: the agent's cost of delivering counts too.
        agentCpuMsPerMessage: perMessage(cpuBefore, cpuAfter),
        serverCpuMsPerMessage: perMessage(serverCpuBefore, serverCpuAfter),
        agentPeakMb: agent.memoryMb()?.peak,
      });
    }
    report(results, options, agent.memoryMb(), server.peakMemoryMb(), [loadAtStart, loadavg()[0]]);
  } finally {
    await agent?.stop();
    await db.end().catch(() => undefined);
    await server.stop();
  }
}

function report(
  results: ModeResult[],
  options: { seconds: number; runs: number },
  memory: { peak: number; now: number } | undefined,
  serverPeakMb: number | undefined,
  load: [number, number],
): void {
  const header = [
    'mode',
    'e2e msg/s',
    'ACK/s',
    'ACK p50 ms',
    'ACK p95 ms',
    'ACK p99 ms',
    'max backlog',
    'agent cpu ms/msg',
    'server cpu ms/msg',
    'agent RSS peak MB',
    'errors',
  ];
  const rows = results.map((r) => [
    r.mode,
    fmt(r.e2eRate),
    fmt(r.ackRate),
    fmt(r.p50, 1),
    fmt(r.p95, 1),
    fmt(r.p99, 1),
    String(Math.max(...r.runs.map((run) => run.backlog))),
    fmt(r.agentCpuMsPerMessage, 2),
    fmt(r.serverCpuMsPerMessage, 2),
    r.agentPeakMb !== undefined ? fmt(r.agentPeakMb) : '-',
    String(r.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const immediate = results.find((r) => r.mode === 'immediate') as ModeResult;
  const pass = immediate.e2eRate >= TARGET_RATE && immediate.p95 < TARGET_P95_MS && immediate.errors === 0;
  const lines = [
    '',
    `hearth-agent MLLP end to end (socket in, bot run, ACK out): ${CONNECTIONS} connections, one message in flight ` +
      `each, trivial bot; ${options.runs} runs of ${options.seconds} s per mode, medians`,
    '',
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    '',
    `agent memory: peak RSS (VmHWM) ${memory ? fmt(memory.peak) : '-'} MB, RSS at the end ${memory ? fmt(memory.now) : '-'} MB` +
      `; server peak ${serverPeakMb !== undefined ? fmt(serverPeakMb) : '-'} MB`,
    `machine: ${availableParallelism()} CPUs, load average (1 min) ${fmt(load[0], 1)} at the start, ${fmt(load[1], 1)} at the end`,
    `target (immediate): >= ${TARGET_RATE} msg/s end to end and ACK p95 < ${TARGET_P95_MS} ms: ` +
      `${fmt(immediate.e2eRate)} msg/s, p95 ${fmt(immediate.p95, 1)} ms: ${pass ? 'PASS' : 'FAIL'}`,
    '',
  ];
  process.stdout.write(lines.join('\n'));
}
