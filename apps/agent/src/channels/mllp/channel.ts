// The MLLP channel: a listener for HL7 v2 senders (interface engines, EHRs) and a sender for
// $push. Each connection's messages are handled one after another, in order. Acknowledgement
// modes (setting `ackMode`): `immediate` answers AA as soon as the message is in the agent's
// on-disk queue; `durable` answers only once the server has run the channel's bot (its answer,
// or an ACK built here), so a sender's message is acknowledged only when Hearth has it.
import { randomUUID } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { buildAck, HL7_V2_CONTENT_TYPE, Hl7Message } from '@hearth/core';
import type { Channel, ChannelContext, ChannelMessage } from '../types.js';
import { encodeFrame, MllpDecoder } from './framing.js';
import { listenOn } from '../listen.js';

export type AckMode = 'immediate' | 'durable';

function ackModeOf(settings: Record<string, string>): AckMode {
  const mode = settings.ackMode ?? 'immediate';
  if (mode !== 'immediate' && mode !== 'durable') {
    throw new Error(`ackMode must be immediate or durable, got ${JSON.stringify(mode)}`);
  }
  return mode;
}

/** `host:port` or `mllp://host:port`. */
export function hostAndPort(destination: string): { host: string; port: number } {
  const url = new URL(destination.includes('://') ? destination : `mllp://${destination}`);
  const port = Number(url.port);
  if (!url.hostname || !Number.isInteger(port) || port <= 0) {
    throw new Error(`MLLP destination needs a host and port: ${destination}`);
  }
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

/** An ACK for text that could not be read as HL7 (no MSH to answer): AR with the reason. */
function rejectUnreadable(reason: string): string {
  const ack = Hl7Message.create();
  ack.header.setComponents(9, ['ACK']).set(10, randomUUID().replace(/-/g, '').slice(0, 20)).set(11, 'P').set(12, '2.5');
  ack.addSegment('MSA').set(1, 'AR').set(3, reason);
  return ack.toString();
}

export function createMllpChannel(context: ChannelContext): Channel {
  const ackMode = ackModeOf(context.settings);
  const encoding = (context.settings.charset ?? 'utf8') as BufferEncoding;
  const sockets = new Set<Socket>();
  let server: Server | undefined;

  /** One message: deliver it, and the answer to send back. */
  async function answerFor(text: string, remote: string): Promise<string> {
    let message: Hl7Message;
    try {
      message = Hl7Message.parse(text);
    } catch (err) {
      context.log.warn('unreadable HL7 message refused', { remote, error: (err as Error).message });
      return rejectUnreadable((err as Error).message);
    }
    const inbound: ChannelMessage = { contentType: HL7_V2_CONTENT_TYPE, body: text, remote };
    const delivered = context.deliver(inbound);
    if (ackMode === 'immediate') {
      // deliver() has written the message to the on-disk queue before returning.
      delivered.catch((err: unknown) =>
        context.log.warn('message refused by the server', { remote, error: String(err) }),
      );
      return buildAck(message, { code: 'AA' }).toString();
    }
    try {
      const answer = await delivered;
      return answer?.body ? answer.body : buildAck(message, { code: 'AA' }).toString();
    } catch (err) {
      return buildAck(message, { code: 'AE', text: (err as Error).message.slice(0, 200) }).toString();
    }
  }

  function accept(socket: Socket): void {
    sockets.add(socket);
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    // The core keeps a connection's messages in order by its remote address (unique while open).
    const decoder = new MllpDecoder();
    let chain = Promise.resolve();
    socket.on('data', (chunk) => {
      let frames: Buffer[];
      try {
        frames = decoder.push(chunk);
      } catch (err) {
        context.log.warn('MLLP framing error; closing the connection', { remote, error: (err as Error).message });
        socket.destroy();
        return;
      }
      for (const frame of frames) {
        const text = frame.toString(encoding);
        chain = chain.then(async () => {
          const answer = await answerFor(text, remote);
          if (!socket.destroyed) {
            socket.write(encodeFrame(answer, encoding));
          }
        });
      }
    });
    socket.on('error', (err) => context.log.warn('MLLP connection error', { remote, error: err.message }));
    socket.on('close', () => sockets.delete(socket));
  }

  return {
    async start() {
      server = createServer(accept);
      await listenOn(server, context, 'MLLP');
      context.log.info('MLLP listening', { channel: context.name, address: context.address.href, ackMode });
    },

    async stop() {
      for (const socket of sockets) {
        socket.destroy();
      }
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    },

    push(destination, message, timeoutMs) {
      const { host, port } = hostAndPort(destination);
      return new Promise<ChannelMessage | undefined>((resolve, reject) => {
        const socket = createConnection({ host, port });
        const decoder = new MllpDecoder();
        const timer = setTimeout(() => {
          socket.destroy();
          reject(new Error(`No MLLP answer from ${host}:${port} within ${timeoutMs} ms`));
        }, timeoutMs);
        socket.on('connect', () => socket.write(encodeFrame(message.body, encoding)));
        socket.on('data', (chunk) => {
          const [frame] = decoder.push(chunk);
          if (frame) {
            clearTimeout(timer);
            socket.end();
            resolve({ contentType: HL7_V2_CONTENT_TYPE, body: frame.toString(encoding), remote: `${host}:${port}` });
          }
        });
        socket.on('error', (err) => {
          clearTimeout(timer);
          reject(new Error(`MLLP send to ${host}:${port} failed: ${err.message}`));
        });
      });
    },

    /** The port bound (tests bind port 0). */
    get port(): number {
      const address = server?.address();
      return typeof address === 'object' && address ? address.port : 0;
    },
  } as Channel & { port: number };
}
