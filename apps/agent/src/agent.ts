// The agent process's core: the websocket to the server, the on-disk queue, the channels read
// from the Agent resource (Agent.channel[].endpoint → Endpoint.address), and the server's
// requests ($push out through a channel, reload of the configuration).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent, AgentMessage, Endpoint } from '@hearth/core';
import type { AgentConfig } from './config.js';
import { ServerConnection } from './connection.js';
import { Delivery } from './delivery.js';
import { MessageQueue, type PushRow } from './queue.js';
import { channelFactoryFor } from './channels/registry.js';
import type { Channel, ChannelLogger, ChannelMessage } from './channels/types.js';

export const AGENT_VERSION = '0.1.0';

interface RunningChannel {
  name: string;
  address: string;
  settings: string;
  channel: Channel;
}

export class HearthAgent {
  readonly queue: MessageQueue;
  readonly connection: ServerConnection;
  private readonly delivery: Delivery;
  private channels = new Map<string, RunningChannel>();

  constructor(
    private readonly config: AgentConfig,
    private readonly log: ChannelLogger,
  ) {
    mkdirSync(config.dataDir, { recursive: true });
    this.queue = new MessageQueue(join(config.dataDir, `queue-${config.agentId}.sqlite`));
    this.connection = new ServerConnection({
      baseUrl: config.baseUrl,
      agentId: config.agentId,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      version: AGENT_VERSION,
      heartbeatMs: config.heartbeatMs,
      log,
      onRequest: (message) => this.onServerRequest(message),
      onStatus: (online) => this.onStatus(online),
    });
    this.delivery = new Delivery(
      this.queue,
      async (request) => {
        const response = await this.connection.request(request);
        if (response.type !== 'agent:transmit:response') {
          throw new Error(response.type === 'agent:error' ? response.body : `unexpected ${response.type}`);
        }
        return response;
      },
      (error, row) => log.warn('delivery problem', { channel: row.channel, remote: row.remote, error: error.message }),
    );
  }

  /** Connects; the channels start once the Agent resource has been read (the first connection). */
  async start(): Promise<void> {
    this.queue.prune();
    const ready = new Promise<void>((resolve) => {
      this.firstOnline = resolve;
    });
    this.connection.start();
    await ready;
  }

  private firstOnline?: () => void;

  private onStatus(online: boolean): void {
    this.delivery.setOnline(online);
    if (online && this.firstOnline) {
      const done = this.firstOnline;
      this.firstOnline = undefined;
      void this.reload()
        .then(() => this.resumePushes())
        .catch((err: unknown) => this.log.error('could not read the agent configuration', { error: String(err) }))
        .finally(done);
    }
  }

  /** The channel names running now, with their bound addresses (status, tests). */
  runningChannels(): Map<string, Channel> {
    return new Map([...this.channels].map(([name, c]) => [name, c.channel]));
  }

  private async fhir<T>(path: string): Promise<T> {
    const token = await this.connection.accessToken();
    const res = await fetch(new URL(`fhir/R4/${path}`, this.config.baseUrl), {
      headers: { authorization: `Bearer ${token}`, accept: 'application/fhir+json' },
    });
    if (!res.ok) {
      throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    }
    return (await res.json()) as T;
  }

  /**
   * Reads the Agent and its channels' Endpoints again; starts new channels, stops removed ones
   * and restarts those whose address or settings changed.
   */
  async reload(): Promise<void> {
    const agent = await this.fhir<Agent>(`Agent/${this.config.agentId}`);
    const agentSettings: Record<string, string> = {};
    for (const s of agent.setting ?? []) {
      const value = s.valueString ?? s.valueBoolean ?? s.valueDecimal ?? s.valueInteger;
      if (value !== undefined) {
        agentSettings[s.name] = String(value);
      }
    }
    const wanted = new Map<string, { address: URL; settings: Record<string, string> }>();
    for (const c of agent.channel ?? []) {
      const ref = c.endpoint?.reference ?? '';
      const endpoint = await this.fhir<Endpoint>(ref);
      const address = new URL(endpoint.address);
      // Settings: the Agent's, then the address's query (?ackMode=durable) for this channel.
      const settings = { ...agentSettings, ...Object.fromEntries(address.searchParams) };
      wanted.set(c.name, { address, settings });
    }
    for (const [name, running] of this.channels) {
      const next = wanted.get(name);
      if (!next || next.address.href !== running.address || JSON.stringify(next.settings) !== running.settings) {
        await running.channel.stop();
        this.channels.delete(name);
        this.log.info('channel stopped', { channel: name });
      }
    }
    for (const [name, { address, settings }] of wanted) {
      if (this.channels.has(name)) {
        continue;
      }
      try {
        const channel = channelFactoryFor(address)({
          name,
          address,
          settings,
          deliver: (message) => this.delivery.deliver(name, `${name}|${message.remote}`, message),
          log: this.log,
        });
        await channel.start();
        this.channels.set(name, { name, address: address.href, settings: JSON.stringify(settings), channel });
      } catch (err) {
        this.log.error('channel could not start', { channel: name, address: address.href, error: String(err) });
      }
    }
  }

  private async onServerRequest(message: AgentMessage): Promise<AgentMessage | undefined> {
    if (message.type === 'agent:reloadconfig:request') {
      await this.reload();
      return { type: 'agent:reloadconfig:response', statusCode: 200 };
    }
    if (message.type === 'agent:transmit:request') {
      const push: PushRow = {
        callback: message.callback ?? '',
        ...(message.channel ? { channel: message.channel } : {}),
        destination: message.remote,
        contentType: message.contentType,
        body: message.body,
        timeoutMs: 10_000,
      };
      // On disk first: a push the agent accepted is sent even if it restarts now.
      this.queue.savePush(push);
      return this.executePush(push);
    }
    return undefined;
  }

  private async executePush(push: PushRow): Promise<AgentMessage> {
    let base = { type: 'agent:transmit:response' as const, remote: push.destination, channel: push.channel };
    try {
      const running = this.channelForPush(push);
      // The answer names the channel the message went through (the server logs it under that channel).
      base = { ...base, channel: running.name };
      const answer: ChannelMessage | undefined = await running.channel.push(
        push.destination,
        { contentType: push.contentType, body: push.body, remote: push.destination },
        push.timeoutMs,
      );
      return {
        ...base,
        contentType: answer?.contentType ?? push.contentType,
        body: answer?.body ?? '',
        statusCode: 200,
      };
    } catch (err) {
      return { ...base, contentType: 'text/plain', body: (err as Error).message, statusCode: 502 };
    } finally {
      this.queue.removePush(push.callback);
    }
  }

  /** The channel named, else the first whose address has the destination's scheme. */
  private channelForPush(push: PushRow): RunningChannel {
    if (push.channel) {
      const named = this.channels.get(push.channel);
      if (!named) {
        throw new Error(`No channel named ${push.channel} is running`);
      }
      return named;
    }
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(push.destination)?.[1]?.toLowerCase() ?? 'mllp';
    const match = [...this.channels.values()].find((c) => new URL(c.address).protocol === `${scheme}:`);
    if (!match) {
      throw new Error(`No ${scheme} channel is running to send to ${push.destination}`);
    }
    return match;
  }

  /** Pushes accepted before a restart are sent now; their answers go to the server (if still waited for). */
  private async resumePushes(): Promise<void> {
    for (const push of this.queue.pushes()) {
      const answer = await this.executePush(push);
      this.connection.send({ ...answer, callback: push.callback } as AgentMessage);
    }
  }

  async stop(): Promise<void> {
    this.delivery.stop();
    for (const running of this.channels.values()) {
      await running.channel.stop();
    }
    this.channels.clear();
    await this.connection.stop();
    this.queue.close();
  }
}
