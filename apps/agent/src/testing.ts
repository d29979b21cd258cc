// Test helpers: an MLLP connection that sends frames and reads the answers in order.
import { connect, type Socket } from 'node:net';
import { MllpDecoder, encodeFrame } from './channels/mllp/framing.js';
import type { ChannelLogger } from './channels/types.js';

export const quietLog: ChannelLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function hl7(id: string, extra = ''): string {
  return `MSH|^~\\&|LAB|NORTH|HEARTH|CLOUD|20240101||ADT^A01|${id}|P|2.5.1\rPID|1||${id}${extra}||DOE^JOHN\r`;
}

export interface MllpTestClient {
  socket: Socket;
  /** Writes raw bytes (to split frames where a test wants). */
  write(bytes: Buffer): void;
  send(text: string): Promise<string>;
  nextAnswer(): Promise<string>;
  close(): void;
}

export async function mllpClient(port: number): Promise<MllpTestClient> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const decoder = new MllpDecoder();
  const answers: string[] = [];
  const waiters: ((text: string) => void)[] = [];
  socket.on('data', (chunk) => {
    for (const frame of decoder.push(chunk)) {
      const waiter = waiters.shift();
      if (waiter) {
        waiter(frame.toString('utf8'));
      } else {
        answers.push(frame.toString('utf8'));
      }
    }
  });
  const nextAnswer = () =>
    answers.length > 0 ? Promise.resolve(answers.shift() as string) : new Promise<string>((r) => waiters.push(r));
  return {
    socket,
    write: (bytes) => socket.write(bytes),
    send(text) {
      socket.write(encodeFrame(text));
      return nextAnswer();
    },
    nextAnswer,
    close: () => socket.destroy(),
  };
}
