// The ASTM channel: listens for analyzers (E1381 over TCP), delivers each whole transmission as one
// `x-application/astm` message, sends the bot's answer (e.g. the orders a host query asked for)
// back on the same connection, and pushes transmissions out to an analyzer or LIS as a client.
import net from 'node:net';
import type { Channel, ChannelContext, ChannelFactory, ChannelMessage } from '../types.js';
import { AstmLink, defaultAstmTimings, type AstmTimings } from './link.js';
import { maxFrameText } from './frames.js';
import { listenOn } from '../listen.js';

export const astmContentType = 'x-application/astm';

/**
 * Channel settings (all optional): `encoding` (`latin1`, the default, or `utf8`), the E1381 timers
 * in milliseconds (`establishTimeoutMs`, `frameTimeoutMs`, `receiveTimeoutMs`, `busyRetryMs`,
 * `contentionRetryMs`), `maxTries`, `maxFrameText`, and `pushReply` (`wait`: after a push, wait for
 * the remote's own transmission and return it as the answer).
 */
export interface AstmSettings {
  encoding: BufferEncoding;
  timings: AstmTimings;
  maxFrameText: number;
  pushReply: boolean;
}

export function astmSettings(settings: Record<string, string>): AstmSettings {
  const encoding = settings.encoding ?? 'latin1';
  if (encoding !== 'latin1' && encoding !== 'utf8')
    throw new Error(`ASTM setting encoding: '${encoding}' is not latin1 or utf8`);
  const timings = { ...defaultAstmTimings };
  for (const key of Object.keys(timings) as (keyof AstmTimings)[]) {
    if (settings[key] !== undefined) timings[key] = positiveInteger(key, settings[key]);
  }
  const frameText =
    settings.maxFrameText === undefined ? maxFrameText : positiveInteger('maxFrameText', settings.maxFrameText);
  return { encoding, timings, maxFrameText: frameText, pushReply: settings.pushReply === 'wait' };
}

function positiveInteger(key: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`ASTM setting ${key}: '${value}' is not a positive whole number`);
  return n;
}

export function parseHostPort(destination: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(destination.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 1 || port > 65535) throw new Error(`'${destination}' is not host:port`);
  return { host: match[1] ?? match[2], port };
}

export const createAstmChannel: ChannelFactory = (context) => new AstmChannel(context);

class AstmChannel implements Channel {
  private readonly settings: AstmSettings;
  private server: net.Server | undefined;
  private readonly links = new Set<AstmLink>();

  constructor(private readonly context: ChannelContext) {
    this.settings = astmSettings(context.settings);
  }

  async start(): Promise<void> {
    const server = net.createServer((socket) => this.accept(socket));
    await listenOn(server, this.context, 'ASTM');
    this.server = server;
  }

  /** The port the channel listens on (useful with port 0 in tests). */
  get port(): number | undefined {
    const address = this.server?.address();
    return typeof address === 'object' && address ? address.port : undefined;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const link of this.links) link.close();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    const log = this.context.log;
    // Each transmission is handed to the agent's queue as soon as it ends (on disk when deliver()
    // returns; the queue keeps one connection's transmissions in order), and the answers go back
    // to the analyzer in that same order.
    let chain = Promise.resolve();
    const link: AstmLink = new AstmLink(
      socket,
      this.settings.timings,
      {
        onTransmission: (data) => {
          const answer = this.send(data, remote);
          chain = chain.then(() => this.answer(link, answer, remote));
        },
        onProblem: (message) => log.warn(`ASTM ${this.context.name}: ${message}`, { remote }),
      },
      this.settings.maxFrameText,
    );
    this.links.add(link);
    socket.on('close', () => this.links.delete(link));
  }

  /** Hands a transmission to the server through the agent's queue (stored before this returns). */
  private send(data: Buffer, remote: string): Promise<ChannelMessage | undefined> {
    const { encoding } = this.settings;
    try {
      return this.context.deliver({ contentType: astmContentType, body: data.toString(encoding), remote });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Sends the bot's answer (e.g. the orders a host query asked for) back on the connection. */
  private async answer(link: AstmLink, pending: Promise<ChannelMessage | undefined>, remote: string): Promise<void> {
    const { encoding } = this.settings;
    try {
      const answer = await pending;
      if (answer?.body && !link.isClosed) await link.send(Buffer.from(answer.body, encoding));
    } catch (error) {
      this.context.log.error(`ASTM ${this.context.name}: a transmission from ${remote} was not delivered or answered`, {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  async push(destination: string, message: ChannelMessage, timeoutMs: number): Promise<ChannelMessage | undefined> {
    const { host, port } = parseHostPort(destination);
    const { encoding } = this.settings;
    const socket = net.connect({ host, port });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`ASTM push to ${destination}: no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    let reply: ((data: Buffer) => void) | undefined;
    const replied = new Promise<Buffer>((resolve) => (reply = resolve));
    let sent = false;
    let chain = Promise.resolve();
    const link: AstmLink = new AstmLink(
      socket,
      this.settings.timings,
      {
        // After our transmission, the remote's next one is the reply we wait for; anything it sent
        // before (it won a contention) is an inbound transmission like any other.
        onTransmission: (data) => {
          if (sent && this.settings.pushReply) reply!(data);
          else {
            const answer = this.send(data, destination);
            chain = chain.then(() => this.answer(link, answer, destination));
          }
        },
        onProblem: (text) => this.context.log.warn(`ASTM ${this.context.name} push: ${text}`, { destination }),
      },
      this.settings.maxFrameText,
    );
    try {
      await Promise.race([
        new Promise<void>((resolve, reject) => {
          socket.once('connect', resolve);
          socket.once('error', reject);
        }),
        timeout,
      ]);
      await Promise.race([link.send(Buffer.from(message.body, encoding)), timeout]);
      sent = true;
      if (!this.settings.pushReply) return undefined;
      const data = await Promise.race([replied, timeout]);
      return { contentType: astmContentType, body: data.toString(encoding), remote: destination };
    } finally {
      clearTimeout(timer);
      // Let EOT reach the remote, then close; never keep a half-open socket around.
      socket.end();
      setTimeout(() => socket.destroy(), 1_000).unref();
    }
  }
}
