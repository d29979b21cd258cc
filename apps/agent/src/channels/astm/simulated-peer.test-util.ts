// A simulated analyzer (or LIS) written from E1381 for the tests: it speaks the low-level protocol
// byte by byte over a real socket, so the tests can send what a broken instrument sends too.
import net from 'node:net';
import { ACK, CR, ENQ, EOT, ETB, ETX, LF, NAK, STX, checksum } from './frames.js';

/** Bytes read from a socket, taken one at a time in order. */
export class ByteQueue {
  private readonly bytes: number[] = [];
  private waiter: (() => void) | undefined;
  closed = false;

  constructor(socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.bytes.push(...chunk);
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
  }

  /** The next byte, or undefined when none came within `timeoutMs`. */
  async next(timeoutMs = 2_000): Promise<number | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.bytes.length === 0) {
      if (this.closed || Date.now() >= deadline) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = undefined;
    }
    return this.bytes.shift();
  }

  /** Reads one frame (after its STX was taken) up to its LF. */
  async frame(): Promise<{ number: number; text: string; final: boolean; checksumOk: boolean }> {
    const body: number[] = [];
    for (;;) {
      const b = await this.next();
      if (b === undefined) throw new Error('the frame ended early');
      body.push(b);
      if (b === ETX || b === ETB) break;
    }
    const check = String.fromCharCode((await this.next())!, (await this.next())!);
    const cr = await this.next();
    const lf = await this.next();
    if (cr !== CR || lf !== LF) throw new Error('the frame did not end with CR LF');
    return {
      number: body[0] - 0x30,
      text: Buffer.from(body.slice(1, -1)).toString('latin1'),
      final: body[body.length - 1] === ETX,
      checksumOk: checksum(Buffer.from(body)) === check,
    };
  }
}

export function frameBytes(number: number, text: string, final: boolean, corrupt = false): Buffer {
  const body = Buffer.concat([
    Buffer.from(String(number % 8), 'latin1'),
    Buffer.from(text, 'latin1'),
    Buffer.from([final ? ETX : ETB]),
  ]);
  let check = checksum(body);
  if (corrupt) check = check === '00' ? '01' : '00';
  return Buffer.concat([Buffer.from([STX]), body, Buffer.from(check, 'latin1'), Buffer.from([CR, LF])]);
}

/** Frames of records the way an analyzer with a small frame size sends them (one record may span several). */
export function analyzerFrames(records: string[], maxText: number): { text: string; final: boolean }[] {
  const frames: { text: string; final: boolean }[] = [];
  for (const record of records) {
    const text = `${record}\r`;
    for (let i = 0; i < text.length; i += maxText)
      frames.push({ text: text.slice(i, i + maxText), final: i + maxText >= text.length });
  }
  return frames;
}

export const controlName: Record<number, string> = { [ACK]: 'ACK', [NAK]: 'NAK', [ENQ]: 'ENQ', [EOT]: 'EOT' };

export class SimulatedAnalyzer {
  readonly socket: net.Socket;
  readonly input: ByteQueue;
  /** What the analyzer heard after each thing it sent, in order. */
  readonly heard: string[] = [];

  private constructor(socket: net.Socket) {
    this.socket = socket;
    this.input = new ByteQueue(socket);
  }

  static async connect(port: number): Promise<SimulatedAnalyzer> {
    const socket = net.connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new SimulatedAnalyzer(socket);
  }

  async write(bytes: Buffer | number[]): Promise<string> {
    this.socket.write(Buffer.from(bytes));
    const answer = await this.input.next();
    const name = answer === undefined ? 'nothing' : (controlName[answer] ?? `0x${answer.toString(16)}`);
    this.heard.push(name);
    return name;
  }

  /**
   * Sends records as one transmission. `corrupt` holds the indexes of frames whose first copy goes
   * out with a wrong checksum; the analyzer then retransmits each after the NAK it expects.
   */
  async transmit(records: string[], options: { maxText?: number; corrupt?: Set<number> } = {}): Promise<void> {
    if ((await this.write([ENQ])) !== 'ACK') throw new Error(`ENQ was answered ${this.heard.at(-1)}`);
    const frames = analyzerFrames(records, options.maxText ?? 240);
    for (const [index, frame] of frames.entries()) {
      const number = (index + 1) % 8;
      if (options.corrupt?.has(index)) {
        const answer = await this.write(frameBytes(number, frame.text, frame.final, true));
        if (answer !== 'NAK') throw new Error(`a bad checksum was answered ${answer}`);
      }
      const answer = await this.write(frameBytes(number, frame.text, frame.final));
      if (answer !== 'ACK') throw new Error(`frame ${index} was answered ${answer}`);
    }
    this.socket.write(Buffer.from([EOT]));
  }

  close(): void {
    this.socket.destroy();
  }
}

export interface ReceivedTransmission {
  frames: { number: number; text: string; final: boolean; checksumOk: boolean }[];
  text: string;
}

/**
 * A simulated receiver (an analyzer or LIS that Hearth pushes to). `answer(frameIndex, attempt)`
 * decides what it replies to each frame; by default ACK.
 */
export class SimulatedReceiver {
  readonly transmissions: ReceivedTransmission[] = [];
  private readonly server: net.Server;

  constructor(
    private readonly behaviour: {
      onEnq?: (attempt: number) => number | undefined;
      answer?: (frameIndex: number, attempt: number) => number | undefined;
      /** Sent after a transmission ends: the receiver's own transmission (records), e.g. a reply. */
      reply?: string[];
    } = {},
  ) {
    this.server = net.createServer((socket) => void this.serve(socket));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(socket: net.Socket): Promise<void> {
    const input = new ByteQueue(socket);
    let enqs = 0;
    for (;;) {
      const b = await input.next(5_000);
      if (b === undefined) return;
      if (b !== ENQ) continue;
      enqs += 1;
      const enqAnswer = this.behaviour.onEnq ? this.behaviour.onEnq(enqs) : ACK;
      if (enqAnswer !== undefined) socket.write(Buffer.from([enqAnswer]));
      if (enqAnswer !== ACK) continue;
      const received: ReceivedTransmission = { frames: [], text: '' };
      const attempts = new Map<number, number>();
      for (;;) {
        const c = await input.next(5_000);
        if (c === undefined || c === EOT) break;
        if (c !== STX) continue;
        const frame = await input.frame();
        const index = received.frames.filter((f) => f.checksumOk).length;
        const attempt = (attempts.get(index) ?? 0) + 1;
        attempts.set(index, attempt);
        const reply = !frame.checksumOk ? NAK : (this.behaviour.answer?.(index, attempt) ?? ACK);
        if (reply === ACK) {
          received.frames.push(frame);
          received.text += frame.text;
        }
        socket.write(Buffer.from([reply]));
      }
      this.transmissions.push(received);
      if (this.behaviour.reply) await this.sendReply(socket, input, this.behaviour.reply);
    }
  }

  private async sendReply(socket: net.Socket, input: ByteQueue, records: string[]): Promise<void> {
    socket.write(Buffer.from([ENQ]));
    if ((await input.next()) !== ACK) return;
    for (const [index, frame] of analyzerFrames(records, 240).entries()) {
      socket.write(frameBytes((index + 1) % 8, frame.text, frame.final));
      if ((await input.next()) !== ACK) return;
    }
    socket.write(Buffer.from([EOT]));
  }
}
