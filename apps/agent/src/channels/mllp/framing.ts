// MLLP framing (HL7 v2 Appendix C, Minimal Lower Layer Protocol): <VT> message <FS><CR>.

export const VT = 0x0b;
export const FS = 0x1c;
export const CR = 0x0d;

export function encodeFrame(text: string, encoding: BufferEncoding = 'utf8'): Buffer {
  return Buffer.concat([Buffer.from([VT]), Buffer.from(text, encoding), Buffer.from([FS, CR])]);
}

/**
 * Splits a TCP byte stream into MLLP frames: a frame may arrive in pieces and several may arrive
 * in one chunk. Bytes outside a frame (line noise, keep-alive newlines) are skipped.
 */
export class MllpDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private inFrame = false;

  constructor(private readonly maxFrameBytes = 16 << 20) {}

  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: Buffer[] = [];
    for (;;) {
      if (!this.inFrame) {
        const start = this.buffer.indexOf(VT);
        if (start === -1) {
          this.buffer = Buffer.alloc(0);
          return frames;
        }
        this.buffer = this.buffer.subarray(start + 1);
        this.inFrame = true;
      }
      const end = this.findEnd();
      if (end === -1) {
        if (this.buffer.length > this.maxFrameBytes) {
          throw new Error(`MLLP frame larger than ${this.maxFrameBytes} bytes`);
        }
        return frames;
      }
      frames.push(Buffer.from(this.buffer.subarray(0, end)));
      this.buffer = this.buffer.subarray(end + 2);
      this.inFrame = false;
    }
  }

  /** The index of <FS><CR> in the buffer, or -1. */
  private findEnd(): number {
    let from = 0;
    for (;;) {
      const fs = this.buffer.indexOf(FS, from);
      if (fs === -1 || fs + 1 >= this.buffer.length) {
        return -1;
      }
      if (this.buffer[fs + 1] === CR) {
        return fs;
      }
      from = fs + 1;
    }
  }
}
