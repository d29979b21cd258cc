// Delivers queued inbound messages to the server, in order per stream (one sender connection),
// one message in flight per stream, and settles whoever waits for each message's answer.
import { createHash } from 'node:crypto';
import { HL7_V2_CONTENT_TYPE, Hl7Message, type AgentTransmitRequest, type AgentTransmitResponse } from '@hearth/core';
import type { ChannelMessage } from './channels/types.js';
import type { InboundRow, MessageQueue } from './queue.js';

/** Sends one transmit request and resolves with its response; rejects when the socket is down. */
export type TransmitFn = (request: AgentTransmitRequest) => Promise<AgentTransmitResponse>;

interface Waiter {
  resolve(answer: ChannelMessage | undefined): void;
  reject(error: Error): void;
}

/** The server answered: the message went through its bot, or was refused for good (4xx). */
export class DeliveryRefused extends Error {}

const RETRY_MS = 1000;

/**
 * The largest message body sent to the server: its websocket takes messages up to its
 * HEARTH_MAX_BODY_BYTES (16 MiB by default), and the transmit request wraps the body in a little
 * JSON. A larger one would make the server drop the socket on every resend: refused here instead.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024 - 64 * 1024;

/**
 * For HL7 v2 the sender's own id for the message, stable across its retransmissions: MSH-10, which
 * is unique for one sending application (MSH-3) at one facility (MSH-4), so two senders on one
 * channel that happen to reuse control ids are told apart. Else a content hash.
 */
export function dedupeKey(message: ChannelMessage): string {
  if (message.contentType.toLowerCase().startsWith(HL7_V2_CONTENT_TYPE)) {
    try {
      const parsed = Hl7Message.parse(message.body);
      const id = parsed.controlId;
      if (id) {
        return `msh:${JSON.stringify([parsed.get('MSH-3') ?? '', parsed.get('MSH-4') ?? '', id])}`;
      }
    } catch {
      // Not parseable: the content hash tells copies apart.
    }
  }
  return `sha256:${createHash('sha256').update(message.contentType).update('\n').update(message.body).digest('hex')}`;
}

export class Delivery {
  private readonly waiters = new Map<number, Waiter[]>();
  private readonly running = new Set<string>();
  private online = false;
  private stopped = false;

  constructor(
    private readonly queue: MessageQueue,
    private readonly transmit: TransmitFn,
    private readonly onError: (error: Error, row: InboundRow) => void = () => undefined,
  ) {}

  /**
   * Stores the message (synchronously: it is on disk when this returns) and resolves with the
   * server's answer once delivered. A duplicate resolves with the earlier copy's answer.
   */
  deliver(channel: string, stream: string, message: ChannelMessage): Promise<ChannelMessage | undefined> {
    const size = Buffer.byteLength(message.body);
    if (size > MAX_MESSAGE_BYTES) {
      return Promise.reject(
        new DeliveryRefused(`a message of ${size} bytes is larger than the server takes (${MAX_MESSAGE_BYTES} bytes)`),
      );
    }
    const { row, duplicate } = this.queue.enqueue({ channel, stream, key: dedupeKey(message), ...message });
    if (duplicate && row.state !== 'pending') {
      return row.state === 'done'
        ? Promise.resolve(answerOf(row))
        : Promise.reject(new DeliveryRefused(row.answerBody ?? 'refused'));
    }
    const answer = new Promise<ChannelMessage | undefined>((resolve, reject) => {
      const list = this.waiters.get(row.id) ?? [];
      list.push({ resolve, reject });
      this.waiters.set(row.id, list);
    });
    this.pump(row.stream);
    return answer;
  }

  /** The socket to the server is up (connected and authenticated) or down. */
  setOnline(online: boolean): void {
    this.online = online;
    if (online) {
      for (const stream of this.queue.pendingStreams()) {
        this.pump(stream);
      }
    }
  }

  stop(): void {
    this.stopped = true;
  }

  private pump(stream: string): void {
    if (!this.online || this.stopped || this.running.has(stream)) {
      return;
    }
    this.running.add(stream);
    void this.drain(stream).finally(() => this.running.delete(stream));
  }

  private async drain(stream: string): Promise<void> {
    for (;;) {
      if (!this.online || this.stopped) {
        return;
      }
      const row = this.queue.nextPending(stream);
      if (!row) {
        return;
      }
      let response: AgentTransmitResponse;
      try {
        response = await this.transmit({
          type: 'agent:transmit:request',
          channel: row.channel,
          remote: row.remote,
          contentType: row.contentType,
          body: row.body,
          callback: row.uuid,
        });
      } catch {
        // The socket went down: the row stays pending, setOnline(true) starts the stream again.
        return;
      }
      const status = response.statusCode ?? 200;
      if (status >= 500) {
        // The server could not take it now (its database, a restart): the same row again, later.
        this.onError(new Error(`server answered ${status}: ${response.body}`), row);
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      const answer = { contentType: response.contentType, body: response.body, statusCode: status };
      this.queue.finish(row.id, status < 400 ? 'done' : 'failed', answer);
      const waiters = this.waiters.get(row.id) ?? [];
      this.waiters.delete(row.id);
      for (const waiter of waiters) {
        if (status < 400) {
          waiter.resolve(answerOf({ ...row, answerType: answer.contentType, answerBody: answer.body }));
        } else {
          waiter.reject(new DeliveryRefused(response.body));
        }
      }
      if (status >= 400) {
        this.onError(new DeliveryRefused(`server refused the message (${status}): ${response.body}`), row);
      }
    }
  }
}

function answerOf(row: InboundRow): ChannelMessage | undefined {
  return row.answerBody
    ? { contentType: row.answerType ?? row.contentType, body: row.answerBody, remote: row.remote }
    : undefined;
}
