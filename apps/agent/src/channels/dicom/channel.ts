// The DICOM channel: a storage SCP (C-ECHO, C-STORE) whose every received instance goes to the
// server as one `application/dicom` message (a base64 Part 10 file), and a storage SCU for push.
import net from 'node:net';
import type { Channel, ChannelContext, ChannelFactory, ChannelMessage } from '../types.js';
import { part10FromDataset } from './part10.js';
import { storageScpClass, type ReceivedInstance } from './scp.js';
import { cStore, isAeTitle, isStoreSuccess, parseDicomDestination } from './scu.js';
import type { Scp } from './dimse.js';
import { listenOn } from '../listen.js';

export const dicomContentType = 'application/dicom';

/**
 * Settings: `aeTitle` (this SCP's AE title and the calling AE title of pushes; default HEARTH),
 * `callingAeTitles` (comma-separated; when set, only these may send), `associationTimeoutMs` and
 * `pduTimeoutMs` (how long a quiet peer is waited for; default 60000).
 */
export interface DicomSettings {
  aeTitle: string;
  callingAeTitles?: Set<string>;
  associationTimeoutMs: number;
  pduTimeoutMs: number;
}

function aeTitle(value: string, key: string): string {
  const title = value.trim();
  if (!isAeTitle(title)) {
    throw new Error(`DICOM setting ${key}: '${value}' is not an AE title (1-16 characters, no backslash)`);
  }
  return title;
}

export function dicomSettings(settings: Record<string, string>): DicomSettings {
  const timeout = (key: string): number => {
    const value = settings[key];
    if (value === undefined) return 60_000;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`DICOM setting ${key}: '${value}' is not a positive whole number`);
    return n;
  };
  const calling = settings.callingAeTitles
    ?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return {
    aeTitle: aeTitle(settings.aeTitle ?? 'HEARTH', 'aeTitle'),
    callingAeTitles: calling?.length ? new Set(calling.map((t) => aeTitle(t, 'callingAeTitles'))) : undefined,
    associationTimeoutMs: timeout('associationTimeoutMs'),
    pduTimeoutMs: timeout('pduTimeoutMs'),
  };
}

export const createDicomChannel: ChannelFactory = (context) => new DicomChannel(context);

class DicomChannel implements Channel {
  private readonly settings: DicomSettings;
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly context: ChannelContext) {
    this.settings = dicomSettings(context.settings);
  }

  async start(): Promise<void> {
    const ScpClass = storageScpClass({
      aeTitle: this.settings.aeTitle,
      callingAeTitles: this.settings.callingAeTitles,
      onInstance: (instance) => this.deliver(instance),
      onProblem: (message, fields) => this.context.log.warn(`DICOM ${this.context.name}: ${message}`, fields),
    });
    const options = { associationTimeout: this.settings.associationTimeoutMs, pduTimeout: this.settings.pduTimeoutMs };
    const server = net.createServer((socket) => this.accept(socket, ScpClass, options));
    await listenOn(server, this.context, 'DICOM');
    this.server = server;
  }

  /** The port the SCP listens on (useful with port 0 in tests). */
  get port(): number | undefined {
    const address = this.server?.address();
    return typeof address === 'object' && address ? address.port : undefined;
  }

  private accept(socket: net.Socket, ScpClass: typeof Scp, options: ConstructorParameters<typeof Scp>[1]): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    const scp = new ScpClass(socket, options);
    scp.on('networkError', (error: Error) => {
      this.context.log.warn(`DICOM ${this.context.name}: ${error.message}`, {
        remote: `${socket.remoteAddress}:${socket.remotePort}`,
      });
      socket.end();
    });
  }

  private async deliver(instance: ReceivedInstance): Promise<void> {
    const file = part10FromDataset(
      instance.dataset,
      instance.transferSyntaxUid,
      instance.sopClassUid,
      instance.sopInstanceUid,
    );
    await this.context.deliver({
      contentType: dicomContentType,
      body: file.toString('base64'),
      remote: instance.remote,
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async push(destination: string, message: ChannelMessage, timeoutMs: number): Promise<ChannelMessage | undefined> {
    const target = parseDicomDestination(destination);
    if (message.contentType !== dicomContentType)
      throw new Error(`a DICOM push takes ${dicomContentType}, not ${message.contentType}`);
    const result = await cStore(target, Buffer.from(message.body, 'base64'), this.settings.aeTitle, timeoutMs);
    const status = result.status.toString(16).toUpperCase().padStart(4, '0');
    if (!isStoreSuccess(result.status)) {
      throw new Error(
        `C-STORE to ${destination} failed with status ${status}${result.errorComment ? `: ${result.errorComment}` : ''}`,
      );
    }
    return {
      contentType: 'application/json',
      body: JSON.stringify({ status, ...(result.errorComment ? { errorComment: result.errorComment } : {}) }),
      remote: destination,
    };
  }
}
