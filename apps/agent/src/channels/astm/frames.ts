// ASTM E1381 (LIS1-A) low-level frames: <STX> FN text <ETB|ETX> C1 C2 <CR> <LF>, where FN is the
// frame number 0-7 and C1 C2 the checksum: the sum of the bytes from FN through ETB/ETX, modulo
// 256, as two upper-case hexadecimal characters.

export const STX = 0x02;
export const ETX = 0x03;
export const EOT = 0x04;
export const ENQ = 0x05;
export const ACK = 0x06;
export const LF = 0x0a;
export const CR = 0x0d;
export const NAK = 0x15;
export const ETB = 0x17;

/** The most text an intermediate frame carries (E1381: frames of at most 247 characters in all). */
export const maxFrameText = 240;

/** Refuse to buffer a "frame" longer than this: a peer that never ends one is not speaking ASTM. */
const maxFrameBytes = 64 * 1024;

export type ControlChar = 'ENQ' | 'ACK' | 'NAK' | 'EOT';

export type LinkEvent =
  | { kind: 'control'; char: ControlChar }
  /** A frame whose checksum matched; `final` when it ended with ETX (the end of a record). */
  | { kind: 'frame'; number: number; text: Buffer; final: boolean }
  | { kind: 'bad-frame'; reason: string }
  /** A byte outside a frame that means nothing here. */
  | { kind: 'other'; byte: number };

const controlChars: Record<number, ControlChar> = { [ENQ]: 'ENQ', [ACK]: 'ACK', [NAK]: 'NAK', [EOT]: 'EOT' };

/** The checksum of a frame's bytes from FN through ETB/ETX, as two hexadecimal characters. */
export function checksum(bytes: Uint8Array): string {
  let sum = 0;
  for (const b of bytes) sum = (sum + b) & 0xff;
  return sum.toString(16).toUpperCase().padStart(2, '0');
}

/** One frame's bytes. */
export function buildFrame(number: number, text: Buffer, final: boolean): Buffer {
  const body = Buffer.concat([Buffer.from([0x30 + (number % 8)]), text, Buffer.from([final ? ETX : ETB])]);
  return Buffer.concat([Buffer.from([STX]), body, Buffer.from(checksum(body), 'latin1'), Buffer.from([CR, LF])]);
}

/**
 * The frames of a transmission: each record (ending with CR) split into intermediate frames (ETB)
 * of at most `maxText` bytes and a last frame (ETX) that ends with the record's CR. Frame numbers
 * start at 1 and wrap from 7 to 0.
 */
export function buildFrames(data: Buffer, maxText = maxFrameText): Buffer[] {
  const frames: Buffer[] = [];
  let number = 1;
  for (const record of splitRecords(data)) {
    // The record's CR is part of its text and ends up in its last frame, before ETX.
    const text = Buffer.concat([record, Buffer.from([CR])]);
    for (let start = 0; start < text.length; start += maxText) {
      const end = Math.min(start + maxText, text.length);
      frames.push(buildFrame(number, text.subarray(start, end), end === text.length));
      number = (number + 1) % 8;
    }
  }
  return frames;
}

/** The records of a transmission's bytes, without their CR (LF and CRLF accepted as separators too). */
function splitRecords(data: Buffer): Buffer[] {
  const records: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= data.length; i++) {
    if (i === data.length || data[i] === CR || data[i] === LF) {
      if (i > start) records.push(data.subarray(start, i));
      start = i + 1;
    }
  }
  return records;
}

/** Turns the bytes a peer sends, however TCP splits them, into control characters and frames. */
export class FrameReader {
  private frame: number[] | undefined;
  private check: number[] | undefined;

  feed(chunk: Buffer): LinkEvent[] {
    const events: LinkEvent[] = [];
    for (const byte of chunk) this.take(byte, events);
    return events;
  }

  private take(byte: number, events: LinkEvent[]): void {
    if (this.check) {
      this.check.push(byte);
      if (this.check.length === 2) events.push(this.finish());
      return;
    }
    if (this.frame) {
      if (byte === ETX || byte === ETB) {
        this.frame.push(byte);
        this.check = [];
      } else if (byte === STX) {
        events.push({ kind: 'bad-frame', reason: 'a new frame began before the last one ended' });
        this.frame = [];
      } else if (byte === EOT || byte === ENQ) {
        events.push({ kind: 'bad-frame', reason: 'the frame ended without ETX or ETB' });
        this.frame = undefined;
        events.push({ kind: 'control', char: controlChars[byte] });
      } else if (this.frame.length >= maxFrameBytes) {
        events.push({ kind: 'bad-frame', reason: `the frame is longer than ${maxFrameBytes} bytes` });
        this.frame = undefined;
      } else {
        this.frame.push(byte);
      }
      return;
    }
    if (byte === STX) this.frame = [];
    else if (controlChars[byte]) events.push({ kind: 'control', char: controlChars[byte] });
    else if (byte !== CR && byte !== LF) events.push({ kind: 'other', byte });
  }

  private finish(): LinkEvent {
    const body = Buffer.from(this.frame!);
    const received = Buffer.from(this.check!).toString('latin1').toUpperCase();
    this.frame = this.check = undefined;
    const fn = body[0] - 0x30;
    if (body.length < 2 || fn < 0 || fn > 7) return { kind: 'bad-frame', reason: 'the frame number is not 0-7' };
    const expected = checksum(body);
    if (received !== expected)
      return { kind: 'bad-frame', reason: `checksum ${received} where ${expected} was expected` };
    return { kind: 'frame', number: fn, text: body.subarray(1, body.length - 1), final: body[body.length - 1] === ETX };
  }
}
