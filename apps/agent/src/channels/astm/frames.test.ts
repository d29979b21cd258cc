import { describe, expect, it } from 'vitest';
import { ACK, ENQ, EOT, ETB, ETX, FrameReader, STX, buildFrame, buildFrames, checksum } from './frames.js';

describe('ASTM frames', () => {
  it('computes the checksum over FN..ETX as two upper-case hex characters', () => {
    // Worked by hand: the byte sum of "1H|\^&" CR ETX is 0x1E5, and of "5L|1|N" CR ETX 0x208.
    expect(checksum(Buffer.from('1H|\\^&\r\x03', 'latin1'))).toBe('E5');
    expect(checksum(Buffer.from('5L|1|N\r\x03', 'latin1'))).toBe('08');
    expect(buildFrame(5, Buffer.from('L|1|N\r'), true).toString('latin1')).toBe('\x025L|1|N\r\x0308\r\n');
  });

  it('splits long records into 240-character intermediate frames and numbers frames 1..7, 0, 1..', () => {
    const data = Buffer.from(`H|\\^&\r${'A'.repeat(1000)}\r`);
    const frames = buildFrames(data);
    expect(frames.map((f) => f[1] - 0x30)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(frames.map((f) => f[f.length - 5])).toEqual([ETX, ETB, ETB, ETB, ETB, ETX]);
    expect(frames.map((f) => f.length - 7)).toEqual([6, 240, 240, 240, 240, 41]);
    expect(buildFrames(Buffer.from('A\r'.repeat(9))).map((f) => f[1] - 0x30)).toEqual([1, 2, 3, 4, 5, 6, 7, 0, 1]);
  });

  it('reads control characters and frames however the bytes are split, and reports bad frames', () => {
    const good = buildFrame(1, Buffer.from('H|\\^&\r'), true);
    const bad = Buffer.from(good);
    bad[bad.length - 3] = 0x30; // break the checksum
    const stream = Buffer.concat([
      Buffer.from([ENQ]),
      good,
      bad,
      Buffer.from([STX, 0x39, 0x41, ETX, 0x30, 0x30, 0x0d, 0x0a, ACK, EOT]),
    ]);
    const reader = new FrameReader();
    const events = [...stream].flatMap((b) => reader.feed(Buffer.from([b])));
    expect(
      events.map((e) => (e.kind === 'control' ? e.char : e.kind === 'bad-frame' ? `bad: ${e.reason}` : e.kind)),
    ).toEqual([
      'ENQ',
      'frame',
      expect.stringMatching(/^bad: checksum .0 where E5 was expected$/),
      'bad: the frame number is not 0-7',
      'ACK',
      'EOT',
    ]);
    const frame = events[1];
    expect(frame).toMatchObject({ kind: 'frame', number: 1, final: true });
    expect(frame.kind === 'frame' && frame.text.toString()).toBe('H|\\^&\r');
  });
});
