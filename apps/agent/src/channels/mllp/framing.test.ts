import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MllpDecoder, encodeFrame } from './framing.js';

describe('MllpDecoder', () => {
  it('reads several frames in one chunk and skips bytes between them', () => {
    const decoder = new MllpDecoder();
    const chunk = Buffer.concat([Buffer.from('\n'), encodeFrame('A|1'), Buffer.from('\r\n'), encodeFrame('B|2')]);
    expect(decoder.push(chunk).map(String)).toEqual(['A|1', 'B|2']);
  });

  it('reads frames split at any byte, and an FS not followed by CR is data', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'binary' }).map((s) => s.replaceAll('\x0b', '').replaceAll('\x1c', '')),
          { minLength: 1, maxLength: 5 },
        ),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1 }),
        (messages, cuts) => {
          const bytes = Buffer.concat(messages.map((m) => encodeFrame(m)));
          const decoder = new MllpDecoder();
          const out: string[] = [];
          let at = 0;
          let i = 0;
          while (at < bytes.length) {
            const size = cuts[i++ % cuts.length];
            out.push(...decoder.push(bytes.subarray(at, at + size)).map((b) => b.toString('utf8')));
            at += size;
          }
          expect(out).toEqual(messages.map((m) => Buffer.from(m, 'utf8').toString('utf8')));
        },
      ),
    );
    const decoder = new MllpDecoder();
    expect(decoder.push(Buffer.from('\x0bA\x1cB\x1c\r')).map(String)).toEqual(['A\x1cB']);
  });

  it('refuses a frame that never ends past its limit', () => {
    const decoder = new MllpDecoder(10);
    expect(() => decoder.push(Buffer.from('\x0b0123456789ABC'))).toThrow(/larger than 10 bytes/);
  });
});
