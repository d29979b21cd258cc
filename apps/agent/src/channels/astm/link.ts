// One ASTM E1381 connection, both directions: as receiver it answers ENQ, checks each frame's
// number and checksum (ACK or NAK) and hands the whole transmission (ENQ..EOT) on; as sender it
// establishes the line, sends frames, retransmits on NAK and gives up after the retries or timeouts
// the standard sets. The other side (the instrument) wins a contention: Hearth is the computer system.
import type { Socket } from 'node:net';
import { ACK, ENQ, EOT, NAK, FrameReader, buildFrames, type LinkEvent } from './frames.js';

export interface AstmTimings {
  /** Sender: how long to wait for the answer to ENQ (E1381: 15 s). */
  establishTimeoutMs: number;
  /** Sender: how long to wait for the answer to a frame (E1381: 15 s). */
  frameTimeoutMs: number;
  /** Receiver: how long to wait for the next frame or EOT (E1381: 30 s). */
  receiveTimeoutMs: number;
  /** Sender: the wait after a NAK to ENQ (receiver busy) before trying again (E1381: 10 s). */
  busyRetryMs: number;
  /** Sender: the wait after a contention (both sent ENQ) before trying again (E1381: 20 s for the computer system). */
  contentionRetryMs: number;
  /** Sender: how often one frame, or the establishment, is tried before the transmission is given up (E1381: 6). */
  maxTries: number;
}

export const defaultAstmTimings: AstmTimings = {
  establishTimeoutMs: 15_000,
  frameTimeoutMs: 15_000,
  receiveTimeoutMs: 30_000,
  busyRetryMs: 10_000,
  contentionRetryMs: 20_000,
  maxTries: 6,
};

export class AstmSendError extends Error {
  override name = 'AstmSendError';
}

export interface AstmLinkHandlers {
  /** A complete transmission: the text of its frames, joined. */
  onTransmission(data: Buffer): void;
  /** Something the peer did that the protocol does not allow (logged, not fatal). */
  onProblem(message: string): void;
}

type Reply = 'ACK' | 'NAK' | 'EOT' | 'ENQ' | 'other' | 'timeout' | 'closed';

interface Receiving {
  expected: number;
  chunks: Buffer[];
  timer: NodeJS.Timeout;
}

export class AstmLink {
  private readonly reader = new FrameReader();
  private mode: 'idle' | 'receiving' | 'establishing' | 'sending' = 'idle';
  private receiving: Receiving | undefined;
  private replyWaiter: ((reply: Reply) => void) | undefined;
  private idleWaiters: (() => void)[] = [];
  private sendQueue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly timings: AstmTimings,
    private readonly handlers: AstmLinkHandlers,
    private readonly maxText?: number,
  ) {
    socket.on('data', (chunk: Buffer) => {
      for (const event of this.reader.feed(chunk)) this.onEvent(event);
    });
    socket.on('close', () => this.onClose());
    socket.on('error', () => {}); // 'close' follows; senders learn of it there
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends one transmission (records separated by CR); transmissions on one link go one after the other. */
  send(data: Buffer): Promise<void> {
    const run = this.sendQueue.then(() => this.transmit(data));
    this.sendQueue = run.catch(() => {});
    return run;
  }

  close(): void {
    this.socket.destroy();
  }

  private onEvent(event: LinkEvent): void {
    if (this.replyWaiter) {
      const waiter = this.replyWaiter;
      this.replyWaiter = undefined;
      waiter(event.kind === 'control' ? event.char : 'other');
      return;
    }
    if (this.mode === 'receiving') this.onReceiving(event);
    else if (this.mode === 'idle') {
      if (event.kind === 'control' && event.char === 'ENQ') this.beginReceiving();
      else if (event.kind !== 'control' || event.char !== 'EOT')
        this.handlers.onProblem(`ignored ${describe(event)} while the line was neutral`);
    }
  }

  private beginReceiving(): void {
    this.mode = 'receiving';
    this.receiving = { expected: 1, chunks: [], timer: this.receiveTimer() };
    this.write(ACK);
  }

  private receiveTimer(): NodeJS.Timeout {
    return setTimeout(() => {
      this.handlers.onProblem(
        `no frame or EOT within ${this.timings.receiveTimeoutMs} ms: the transmission was discarded`,
      );
      this.endReceiving();
    }, this.timings.receiveTimeoutMs);
  }

  private onReceiving(event: LinkEvent): void {
    const r = this.receiving!;
    clearTimeout(r.timer);
    r.timer = this.receiveTimer();
    if (event.kind === 'frame') {
      if (event.number === r.expected) {
        r.chunks.push(event.text);
        r.expected = (r.expected + 1) % 8;
        this.write(ACK);
      } else if (event.number === (r.expected + 7) % 8 && r.chunks.length > 0) {
        // The sender did not hear our ACK and sent the same frame again: acknowledge, keep one copy.
        this.write(ACK);
      } else {
        this.handlers.onProblem(`frame number ${event.number} where ${r.expected} was expected`);
        this.write(NAK);
      }
    } else if (event.kind === 'bad-frame') {
      this.handlers.onProblem(`bad frame: ${event.reason}`);
      this.write(NAK);
    } else if (event.kind === 'control' && event.char === 'EOT') {
      const data = Buffer.concat(r.chunks);
      this.endReceiving();
      if (data.length > 0) this.handlers.onTransmission(data);
    } else if (event.kind === 'control' && event.char === 'ENQ' && r.chunks.length === 0) {
      this.write(ACK); // the sender missed our first ACK
    }
  }

  private endReceiving(): void {
    if (this.receiving) clearTimeout(this.receiving.timer);
    this.receiving = undefined;
    this.becomeIdle();
  }

  private becomeIdle(): void {
    this.mode = 'idle';
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private async untilIdle(): Promise<void> {
    while (this.mode !== 'idle' && !this.closed) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private awaitReply(timeoutMs: number): Promise<Reply> {
    if (this.closed) return Promise.resolve('closed');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.replyWaiter = undefined;
        resolve('timeout');
      }, timeoutMs);
      this.replyWaiter = (reply) => {
        clearTimeout(timer);
        resolve(reply);
      };
    });
  }

  private async transmit(data: Buffer): Promise<void> {
    const frames = buildFrames(data, this.maxText);
    if (frames.length === 0) return;
    await this.establish();
    this.mode = 'sending';
    try {
      for (const frame of frames) await this.sendFrame(frame);
    } finally {
      this.write(EOT);
      this.becomeIdle();
    }
  }

  private async establish(): Promise<void> {
    const t = this.timings;
    for (let attempt = 1; ; attempt++) {
      await this.untilIdle();
      this.checkOpen();
      this.mode = 'establishing';
      this.write(ENQ);
      const reply = await this.awaitReply(t.establishTimeoutMs);
      if (reply === 'ACK') return;
      this.becomeIdle();
      this.checkOpen();
      if (reply === 'timeout') {
        this.write(EOT);
        throw new AstmSendError(`the receiver did not answer ENQ within ${t.establishTimeoutMs} ms`);
      }
      if (attempt >= t.maxTries) {
        throw new AstmSendError(`the line could not be established after ${attempt} tries (last answer: ${reply})`);
      }
      // ENQ back: contention, the instrument goes first and we receive its transmission meanwhile.
      // NAK (or anything else): the receiver is busy.
      await this.sleep(reply === 'ENQ' ? t.contentionRetryMs : t.busyRetryMs);
    }
  }

  private async sendFrame(frame: Buffer): Promise<void> {
    const t = this.timings;
    for (let attempt = 1; ; attempt++) {
      this.checkOpen();
      this.socket.write(frame);
      const reply = await this.awaitReply(t.frameTimeoutMs);
      // EOT from the receiver asks us to stop soon; E1381 lets the sender treat it as ACK.
      if (reply === 'ACK' || reply === 'EOT') return;
      this.checkOpen();
      if (reply === 'timeout')
        throw new AstmSendError(`the receiver did not answer a frame within ${t.frameTimeoutMs} ms`);
      if (attempt >= t.maxTries) throw new AstmSendError(`a frame was refused ${attempt} times`);
      // NAK, or any other answer, means: send the same frame again.
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const onClose = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.socket.off('close', onClose);
        resolve();
      }, ms);
      this.socket.once('close', onClose);
    });
  }

  private checkOpen(): void {
    if (this.closed) throw new AstmSendError('the connection closed');
  }

  private write(byte: number): void {
    if (!this.closed) this.socket.write(Buffer.from([byte]));
  }

  private onClose(): void {
    this.closed = true;
    if (this.receiving) {
      clearTimeout(this.receiving.timer);
      if (this.receiving.chunks.length > 0)
        this.handlers.onProblem('the connection closed in the middle of a transmission: it was discarded');
      this.receiving = undefined;
    }
    this.replyWaiter?.('closed');
    this.replyWaiter = undefined;
    this.becomeIdle();
  }
}

function describe(event: LinkEvent): string {
  if (event.kind === 'control') return event.char;
  if (event.kind === 'other') return `byte 0x${event.byte.toString(16).padStart(2, '0')}`;
  return event.kind === 'frame' ? `frame ${event.number}` : `bad frame (${event.reason})`;
}
