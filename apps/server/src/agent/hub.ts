// The server's side of /ws/agent: each on-premises agent holds one websocket. The hub
// authenticates it (agent:connect:request with its ClientApplication's token; the client must be
// allowed to read the Agent), answers heartbeats, runs each inbound message through its channel's
// bot, and sends $push and $reload-config requests to it, from whichever server process they are
// asked on (the process holding the socket hears of them by broadcast).
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import {
  badRequest,
  fail,
  normalizeErrorString,
  OperationOutcomeError,
  parseAgentMessage,
  type Agent,
  type AgentChannel,
  type AgentMessage,
  type AgentTransmitRequest,
  type AgentTransmitResponse,
  type Bot,
  type Resource,
} from '@hearth/core';
import type { Logger } from '../platform/logger.js';
import type { Repository } from '../storage/repository.js';
import type { Broadcaster } from '../subscriptions/broadcast.js';
import type { BotRunner } from '../bots/runner.js';
import { HEARTH_VERSION } from '../version.js';
import type { AgentStore } from './store.js';
import { STALE_AFTER_MS, type LoggedMessage } from './store.js';
import { botAnswer } from './bot-answer.js';
import type { BinaryStore } from '../storage/binary-store.js';
import { DICOM_CONTENT_TYPE, importDicomInstance } from '../imaging/import-dicom.js';

export interface AgentHubDeps {
  store: AgentStore;
  runner: BotRunner;
  broadcaster: Broadcaster;
  /** The repository of the caller an access token names (throws when the token is not valid). */
  repoForToken(token: string): Promise<Repository>;
  /** Where DICOM instances an agent receives are kept (as Binary content). */
  binaryStore: BinaryStore;
  logger: Logger;
}

interface Connection {
  socket: WebSocket;
  agentId: string;
  projectId: string;
  repo: Repository;
  agent: Agent;
  bots: Map<string, Bot>;
  lastSeen: number;
}

interface Pending {
  resolve(message: AgentMessage): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** Requests sent to an agent through another process travel as broadcasts of this kind. */
const BROADCAST_KIND = 'agent';
/** Deliveries are remembered for a week: an agent offline longer sends them again (and they run). */
const DELIVERY_MEMORY_MS = 7 * 24 * 3600_000;
const LOG_FLUSH_MS = 500;
/** An outgoing message unanswered this long is logged without an answer ($push waits at most 60 s). */
const UNANSWERED_AFTER_MS = 65_000;

export class AgentTimeoutError extends Error {}

export class AgentHub {
  readonly processId = randomUUID();
  private readonly connections = new Map<string, Connection>();
  private readonly pending = new Map<string, Pending>();
  private logBuffer: LoggedMessage[] = [];
  /** Outgoing messages waiting for the agent's answer before they are logged, by callback. */
  private readonly outgoing = new Map<string, { entry: LoggedMessage; sentAt: number }>();
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: AgentHubDeps) {
    deps.broadcaster.onMessage((message) => {
      if (message.k === BROADCAST_KIND) {
        this.onBroadcast(message);
      }
    });
    const sweep = setInterval(() => this.sweep(), 15_000);
    const flush = setInterval(() => void this.flushLog(), LOG_FLUSH_MS);
    const prune = setInterval(
      () => void deps.store.pruneDeliveries(DELIVERY_MEMORY_MS).catch(() => undefined),
      3600_000,
    );
    for (const timer of [sweep, flush, prune]) {
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** Agents connected to this process (tests, status). */
  localAgents(): string[] {
    return [...this.connections.keys()];
  }

  accept(socket: WebSocket): void {
    let connection: Connection | undefined;
    let queue = Promise.resolve();
    socket.on('message', (data, isBinary) => {
      const text = isBinary ? '' : data.toString();
      let message: AgentMessage;
      try {
        message = parseAgentMessage(text);
      } catch (err) {
        send(socket, { type: 'agent:error', body: (err as Error).message });
        return;
      }
      if (connection) {
        connection.lastSeen = Date.now();
      }
      if (message.type === 'agent:connect:request') {
        // Connects (and token refreshes) are handled in order with anything before them.
        queue = queue.then(async () => {
          connection = (await this.connect(socket, message, connection)) ?? connection;
        });
        return;
      }
      if (!connection) {
        send(socket, { type: 'agent:error', body: 'Send agent:connect:request first', callback: message.callback });
        return;
      }
      const current = connection;
      void queue.then(() => this.handle(current, message));
    });
    socket.on('close', () => {
      if (connection && this.connections.get(connection.agentId) === connection) {
        this.connections.delete(connection.agentId);
        void this.deps.store
          .disconnected(connection.agentId, this.processId)
          .catch((err: unknown) => this.deps.logger.warn({ err }, 'could not record agent disconnect'));
      }
    });
    socket.on('error', () => socket.terminate());
  }

  private async connect(
    socket: WebSocket,
    message: Extract<AgentMessage, { type: 'agent:connect:request' }>,
    previous: Connection | undefined,
  ): Promise<Connection | undefined> {
    try {
      const repo = await this.deps.repoForToken(message.accessToken);
      if (previous && previous.agentId !== message.agentId) {
        fail(badRequest('One websocket serves one agent'));
      }
      const agent = (await repo.readResource<Resource>('Agent', message.agentId)).resource as unknown as Agent;
      const projectId = agent.meta?.project as string;
      const connection: Connection = {
        socket,
        agentId: message.agentId,
        projectId,
        repo,
        agent,
        bots: new Map(),
        lastSeen: Date.now(),
      };
      const older = this.connections.get(message.agentId);
      if (older && older.socket !== socket) {
        // The agent connected again (its old socket is half-open): the newest socket wins.
        older.socket.close(4000, 'Replaced by a newer connection of this agent');
      }
      this.connections.set(message.agentId, connection);
      await this.deps.store.connected(message.agentId, projectId, this.processId, message.version);
      send(socket, { type: 'agent:connect:response', callback: message.callback });
      return connection;
    } catch (err) {
      send(socket, {
        type: 'agent:error',
        body: `Connect refused: ${normalizeErrorString(err)}`,
        callback: message.callback,
      });
      if (!previous) {
        socket.close(4001, 'Unauthorized');
      }
      return undefined;
    }
  }

  private async handle(connection: Connection, message: AgentMessage): Promise<void> {
    switch (message.type) {
      case 'agent:heartbeat:request':
        send(connection.socket, {
          type: 'agent:heartbeat:response',
          version: HEARTH_VERSION,
          callback: message.callback,
        });
        await this.deps.store.heartbeat(connection.agentId, this.processId).catch(() => undefined);
        return;
      case 'agent:heartbeat:response':
        return;
      case 'agent:transmit:request':
        send(connection.socket, await this.transmit(connection, message));
        return;
      case 'agent:transmit:response':
      case 'agent:reloadconfig:response':
      case 'agent:error':
        this.answered(message);
        this.settle(message);
        return;
      default:
        send(connection.socket, {
          type: 'agent:error',
          body: `Unexpected ${message.type}`,
          callback: message.callback,
        });
    }
  }

  /**
   * Runs an inbound message through its channel's bot and answers with the bot's result. A message
   * the agent sends again (its acknowledgement was lost) is answered from the delivery record.
   */
  private async transmit(connection: Connection, request: AgentTransmitRequest): Promise<AgentTransmitResponse> {
    const base = {
      type: 'agent:transmit:response' as const,
      channel: request.channel,
      remote: request.remote,
      callback: request.callback,
    };
    const key = request.callback;
    try {
      if (key) {
        const earlier = await this.deps.store.delivered(connection.agentId, key);
        if (earlier) {
          return { ...base, contentType: earlier.contentType, body: earlier.response, statusCode: 200 };
        }
      }
      const channel = this.channel(connection, request.channel);
      let input: unknown = request.body;
      let contentType = request.contentType;
      if (request.contentType === DICOM_CONTENT_TYPE) {
        // An instance from a modality lands in Hearth as it arrives (Binary + ImagingStudy, idempotent);
        // the channel's bot then sees the study the instance is now part of.
        const imported = await importDicomInstance(
          connection.repo,
          this.deps.binaryStore,
          Buffer.from(request.body, 'base64'),
        );
        input = imported.study;
        contentType = 'application/fhir+json';
      }
      const bot = await this.channelBot(connection, channel);
      const result = await this.deps.runner.run({
        bot,
        input,
        contentType,
        callerRepo: connection.repo,
        requester: { reference: `Agent/${connection.agentId}` },
        entities: [`Agent/${connection.agentId}`],
      });
      if (!result.ok) {
        this.log(connection, request, 'in', result.message, 400);
        return { ...base, contentType: 'text/plain', body: result.message, statusCode: 400 };
      }
      const answer = botAnswer(result.value, request.contentType);
      if (key) {
        await this.deps.store.recordDelivery(connection.agentId, key, answer.contentType, answer.body);
      }
      this.log(connection, request, 'in', answer.body, 200);
      return { ...base, ...answer, statusCode: 200 };
    } catch (err) {
      const status = err instanceof OperationOutcomeError ? err.status : 500;
      if (status >= 500) {
        this.deps.logger.warn({ err, agent: connection.agentId }, 'agent transmit failed');
      }
      return { ...base, contentType: 'text/plain', body: normalizeErrorString(err), statusCode: status };
    }
  }

  private channel(connection: Connection, channelName: string | undefined): AgentChannel {
    const channel = connection.agent.channel?.find((c) => c.name === channelName);
    if (!channel) {
      fail(badRequest(`Agent/${connection.agentId} has no channel named ${JSON.stringify(channelName)}`, 'channel'));
    }
    return channel;
  }

  /** The bot a channel sends to, read with the agent's own access (its client must be allowed to). */
  private async channelBot(connection: Connection, channel: AgentChannel): Promise<Bot> {
    const reference = channel.targetReference?.reference;
    const id = /^Bot\/([A-Za-z0-9\-.]{1,64})$/.exec(reference ?? '')?.[1];
    if (!id) {
      fail(badRequest(`Channel ${channel.name} has no target Bot`, 'Agent.channel.targetReference'));
    }
    let bot = connection.bots.get(id);
    if (!bot) {
      bot = (await connection.repo.readResource<Resource>('Bot', id)).resource as unknown as Bot;
      connection.bots.set(id, bot);
    }
    return bot;
  }

  /**
   * Sends a request to an agent, on whichever process holds its socket, and resolves with its
   * answer (the message with the same callback). Rejects with AgentTimeoutError after timeoutMs,
   * with a 400 when the agent is not connected anywhere.
   */
  async request(agentId: string, message: AgentMessage, timeoutMs: number): Promise<AgentMessage> {
    const callback = message.callback ?? randomUUID();
    const outgoing = { ...message, callback } as AgentMessage;
    const answer = new Promise<AgentMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(callback);
        reject(new AgentTimeoutError(`Agent/${agentId} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(callback, { resolve, reject, timer });
    });
    try {
      await this.dispatch(agentId, outgoing);
    } catch (err) {
      this.settleWith(callback, err as Error);
    }
    return answer;
  }

  /** Sends without waiting for an answer (waitForResponse=false); throws when not connected. */
  async sendTo(agentId: string, message: AgentMessage): Promise<void> {
    await this.dispatch(agentId, { ...message, callback: message.callback ?? randomUUID() } as AgentMessage);
  }

  private async dispatch(agentId: string, message: AgentMessage): Promise<void> {
    const local = this.connections.get(agentId);
    if (local) {
      this.logOutgoing(local, message);
      send(local.socket, message);
      return;
    }
    const status = (await this.deps.store.statuses([agentId])).get(agentId);
    if (!status?.processId) {
      fail(badRequest(`Agent/${agentId} is not connected`));
    }
    await this.deps.broadcaster.publish({ k: BROADCAST_KIND, op: 'send', agentId, from: this.processId, message });
  }

  private onBroadcast(broadcast: Record<string, unknown>): void {
    const message = broadcast.message as AgentMessage | undefined;
    if (!message || typeof message !== 'object') {
      return;
    }
    if (broadcast.op === 'send' && typeof broadcast.agentId === 'string' && broadcast.from !== this.processId) {
      const connection = this.connections.get(broadcast.agentId);
      if (connection) {
        this.logOutgoing(connection, message);
        if (message.callback) {
          // The answer comes back on this socket; it is relayed to the process that asked.
          this.relays.set(message.callback, broadcast.from as string);
        }
        send(connection.socket, message);
      }
    } else if (broadcast.op === 'answer' && broadcast.to === this.processId) {
      this.settle(message, false);
    }
  }

  private readonly relays = new Map<string, string>();

  /** An answer from an agent: to the request of this process, or relayed to the one that asked. */
  private settle(message: AgentMessage, relay = true): void {
    const callback = message.callback;
    if (!callback) {
      return;
    }
    const pending = this.pending.get(callback);
    if (pending) {
      this.pending.delete(callback);
      clearTimeout(pending.timer);
      pending.resolve(message);
      return;
    }
    const to = relay ? this.relays.get(callback) : undefined;
    if (to) {
      this.relays.delete(callback);
      void this.deps.broadcaster
        .publish({ k: BROADCAST_KIND, op: 'answer', to, message })
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'could not relay an agent answer'));
    }
  }

  private settleWith(callback: string, error: Error): void {
    const pending = this.pending.get(callback);
    if (pending) {
      this.pending.delete(callback);
      clearTimeout(pending.timer);
      pending.reject(error);
    }
  }

  /** The Agent resource was changed: connections read it again at their next message. */
  async reloaded(agentId: string): Promise<void> {
    const connection = this.connections.get(agentId);
    if (connection) {
      connection.agent = (await connection.repo.readResource<Resource>('Agent', agentId)).resource as unknown as Agent;
      connection.bots.clear();
    }
  }

  /**
   * A Bot of this project was written (deployed again, changed), in this process or another: each
   * connection of the project reads its channels' bots again at its next message, so a redeployed
   * bot runs its new code without a `$reload-config`.
   */
  botsChanged(projectId: string): void {
    for (const connection of this.connections.values()) {
      if (connection.projectId === projectId) connection.bots.clear();
    }
  }

  /** The agent's logged messages (of one channel when given), newest first, this process's buffer included. */
  async recent(agentId: string, channel?: string) {
    await this.flushLog();
    return this.deps.store.recent(agentId, channel);
  }

  private log(
    connection: Connection,
    request: AgentTransmitRequest,
    direction: 'in' | 'out',
    response: string,
    statusCode: number,
  ) {
    this.logBuffer.push({
      agentId: connection.agentId,
      projectId: connection.projectId,
      channel: request.channel ?? '',
      direction,
      remote: request.remote,
      contentType: request.contentType,
      body: request.body,
      response,
      statusCode,
    });
  }

  /** An outgoing message is logged once the agent answers it (or gives up): with the remote's answer. */
  private logOutgoing(connection: Connection, message: AgentMessage): void {
    if (message.type !== 'agent:transmit:request') {
      return;
    }
    const entry: LoggedMessage = {
      agentId: connection.agentId,
      projectId: connection.projectId,
      channel: message.channel ?? '',
      direction: 'out',
      remote: message.remote,
      contentType: message.contentType,
      body: message.body,
      statusCode: 0,
    };
    if (message.callback) {
      this.outgoing.set(message.callback, { entry, sentAt: Date.now() });
    } else {
      this.logBuffer.push(entry);
    }
  }

  /** The agent answered an outgoing message: it is logged with the answer and its status. */
  private answered(message: AgentMessage): void {
    const waiting = message.callback ? this.outgoing.get(message.callback) : undefined;
    if (!waiting || !message.callback) {
      return;
    }
    this.outgoing.delete(message.callback);
    const { entry } = waiting;
    if (message.type === 'agent:transmit:response') {
      entry.response = message.body;
      entry.statusCode = message.statusCode ?? 200;
      // The agent names the channel it sent through when the request left it to choose.
      entry.channel = entry.channel || (message.channel ?? '');
    } else if (message.type === 'agent:error') {
      entry.response = message.body;
      entry.statusCode = 400;
    }
    this.logBuffer.push(entry);
  }

  private async flushLog(all = false): Promise<void> {
    const now = Date.now();
    for (const [callback, { entry, sentAt }] of this.outgoing) {
      if (all || now - sentAt > UNANSWERED_AFTER_MS) {
        this.outgoing.delete(callback);
        this.logBuffer.push(entry);
      }
    }
    const batch = this.logBuffer;
    this.logBuffer = [];
    await this.deps.store
      .log(batch)
      .catch((err: unknown) => this.deps.logger.warn({ err }, 'could not write the agent message log'));
  }

  /** Sockets silent for longer than the stale limit are dropped (the agent reconnects). */
  private sweep(): void {
    const now = Date.now();
    for (const connection of this.connections.values()) {
      if (now - connection.lastSeen > STALE_AFTER_MS) {
        connection.socket.terminate();
      }
    }
  }

  async close(): Promise<void> {
    for (const timer of this.timers) {
      clearInterval(timer);
    }
    for (const connection of this.connections.values()) {
      connection.socket.close(1001, 'Server shutting down');
      await this.deps.store.disconnected(connection.agentId, this.processId).catch(() => undefined);
    }
    this.connections.clear();
    await this.flushLog(true);
  }
}

function send(socket: WebSocket, message: AgentMessage): void {
  if (socket.readyState === socket.OPEN) {
    socket.send(JSON.stringify(message));
  }
}
