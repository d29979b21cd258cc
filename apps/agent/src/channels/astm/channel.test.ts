import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { astmValue, parseAstmTransmission } from '@hearth/core';
import type { Channel, ChannelContext, ChannelMessage } from '../types.js';
import { createAstmChannel } from './channel.js';
import { ACK, ENQ, EOT, NAK } from './frames.js';
import { SimulatedAnalyzer, SimulatedReceiver, frameBytes } from './simulated-peer.test-util.js';

// Short E1381 timers so that the timeout paths take milliseconds, not the standard's seconds.
const fast = {
  establishTimeoutMs: '300',
  frameTimeoutMs: '300',
  receiveTimeoutMs: '300',
  busyRetryMs: '50',
  contentionRetryMs: '100',
};

const upload = [
  'H|\\^&|||ACME^1.0|||||||P|1',
  'P|1|PID-1|||Doe^Jane',
  'O|1|SPEC-1||^^^GLU|R',
  'R|1|^^^GLU|5.4|mmol/L||N||F',
  'L|1|N',
];

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

interface Started {
  channel: Channel & { port?: number };
  delivered: ChannelMessage[];
  problems: string[];
  port: number;
}

async function startChannel(
  options: { settings?: Record<string, string>; answer?: (m: ChannelMessage) => ChannelMessage | undefined } = {},
): Promise<Started> {
  const delivered: ChannelMessage[] = [];
  const problems: string[] = [];
  const context: ChannelContext = {
    name: 'lab',
    address: new URL('astm://127.0.0.1:0'),
    settings: { ...fast, ...options.settings },
    deliver: async (message) => {
      delivered.push(message);
      return options.answer?.(message);
    },
    log: { info: () => {}, warn: (m) => problems.push(m), error: (m) => problems.push(m) },
  };
  const channel = createAstmChannel(context) as Channel & { port?: number };
  await channel.start();
  cleanup.push(() => channel.stop());
  return { channel, delivered, problems, port: channel.port! };
}

async function connect(port: number): Promise<SimulatedAnalyzer> {
  const analyzer = await SimulatedAnalyzer.connect(port);
  cleanup.push(() => analyzer.close());
  return analyzer;
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ASTM channel: receiving from an analyzer', () => {
  it('acknowledges every frame and delivers the whole transmission as one message with its records', async () => {
    const { delivered, port } = await startChannel();
    const analyzer = await connect(port);
    await analyzer.transmit(upload);
    await until(() => delivered.length === 1);
    expect(analyzer.heard).toEqual(['ACK', 'ACK', 'ACK', 'ACK', 'ACK', 'ACK']);
    expect(delivered[0].contentType).toBe('x-application/astm');
    expect(delivered[0].body).toBe(upload.map((r) => `${r}\r`).join(''));
    expect(delivered[0].remote).toMatch(/^127\.0\.0\.1:\d+$/);
    const result = parseAstmTransmission(delivered[0].body).messages[0].patients[0].orders[0].results[0];
    expect(astmValue(result.record, 4)).toBe('5.4');
  });

  it('answers a bad checksum with NAK and takes the retransmitted frame once', async () => {
    const { delivered, port, problems } = await startChannel();
    const analyzer = await connect(port);
    await analyzer.transmit(upload, { corrupt: new Set([0, 3]) });
    await until(() => delivered.length === 1);
    expect(analyzer.heard).toEqual(['ACK', 'NAK', 'ACK', 'ACK', 'ACK', 'NAK', 'ACK', 'ACK']);
    expect(delivered[0].body).toBe(upload.map((r) => `${r}\r`).join(''));
    expect(problems.filter((p) => p.includes('checksum'))).toHaveLength(2);
  });

  it('joins a record split over intermediate frames (ETB), with frame numbers wrapping 7 → 0', async () => {
    const { delivered, port } = await startChannel();
    const analyzer = await connect(port);
    const comment = `C|1|I|${'x'.repeat(600)}|G`;
    const records = [upload[0], upload[1], upload[2], upload[3], comment, upload[3].replace('R|1', 'R|2'), upload[4]];
    await analyzer.transmit(records, { maxText: 50 });
    await until(() => delivered.length === 1);
    expect(analyzer.heard.length).toBeGreaterThan(9); // more than 8 frames: numbers wrapped
    expect(analyzer.heard.every((a) => a === 'ACK')).toBe(true);
    const parsed = parseAstmTransmission(delivered[0].body);
    expect(parsed.records.map((r) => r.type)).toEqual(['H', 'P', 'O', 'R', 'C', 'R', 'L']);
    expect(astmValue(parsed.records[4], 4)).toBe('x'.repeat(600));
  });

  it('refuses a frame with the wrong number, and acknowledges a repeated frame without keeping it twice', async () => {
    const { delivered, port } = await startChannel();
    const analyzer = await connect(port);
    expect(await analyzer.write([ENQ])).toBe('ACK');
    expect(await analyzer.write(frameBytes(2, 'H|\\^&\r', true))).toBe('NAK'); // 1 expected
    expect(await analyzer.write(frameBytes(1, 'H|\\^&\r', true))).toBe('ACK');
    expect(await analyzer.write(frameBytes(1, 'H|\\^&\r', true))).toBe('ACK'); // our ACK "lost": sent again
    expect(await analyzer.write(frameBytes(2, 'L|1\r', true))).toBe('ACK');
    analyzer.socket.write(Buffer.from([EOT]));
    await until(() => delivered.length === 1);
    expect(delivered[0].body).toBe('H|\\^&\rL|1\r');
  });

  it('discards a transmission whose sender goes quiet for longer than the receive timeout, and takes the next', async () => {
    const { delivered, port, problems } = await startChannel();
    const analyzer = await connect(port);
    expect(await analyzer.write([ENQ])).toBe('ACK');
    expect(await analyzer.write(frameBytes(1, 'H|\\^&\r', true))).toBe('ACK');
    await until(() => problems.some((p) => p.includes('no frame or EOT')));
    await analyzer.transmit(upload);
    await until(() => delivered.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(delivered).toHaveLength(1);
    expect(delivered[0].body.startsWith('H|\\^&|||ACME')).toBe(true);
  });

  it('reads the bytes as UTF-8 when the channel says so (latin1 by default)', async () => {
    const records = ['H|\\^&', 'P|1|PID-1|||Müller^Zoë', 'L|1'];
    const utf8 = await startChannel({ settings: { encoding: 'utf8' } });
    const a = await connect(utf8.port);
    await a.transmit(records.map((r) => Buffer.from(r, 'utf8').toString('latin1')));
    await until(() => utf8.delivered.length === 1);
    expect(astmValue(parseAstmTransmission(utf8.delivered[0].body).records[1], 6, 2)).toBe('Zoë');
    const latin1 = await startChannel();
    const b = await connect(latin1.port);
    await b.transmit(records);
    await until(() => latin1.delivered.length === 1);
    expect(astmValue(parseAstmTransmission(latin1.delivered[0].body).records[1], 6, 1)).toBe('Müller');
  });

  it('delivers transmissions of one connection in order, and two connections at once', async () => {
    const { delivered, port } = await startChannel();
    const a = await connect(port);
    const b = await connect(port);
    const run = async (analyzer: SimulatedAnalyzer, tag: string) => {
      for (let i = 0; i < 3; i++) await analyzer.transmit(['H|\\^&', `P|${i}|${tag}`, 'L|1']);
    };
    await Promise.all([run(a, 'A'), run(b, 'B')]);
    await until(() => delivered.length === 6);
    for (const tag of ['A', 'B']) {
      const mine = delivered
        .filter((m) => m.body.includes(`|${tag}\r`))
        .map((m) => parseAstmTransmission(m.body).records[1].fields[1][0][0]);
      expect(mine).toEqual(['0', '1', '2']);
    }
  });

  it("sends the bot's answer (e.g. orders for a host query) back to the analyzer as a transmission of its own", async () => {
    const answerRecords = 'H|\\^&\rP|1\rO|1|SPEC-7||^^^GLU|R\rL|1|N\r';
    const { port } = await startChannel({
      answer: (m) => ({ contentType: 'x-application/astm', body: answerRecords, remote: m.remote }),
    });
    const analyzer = await connect(port);
    await analyzer.transmit(['H|\\^&', 'Q|1|^SPEC-7||ALL', 'L|1|N']);
    // The channel now establishes the line towards the analyzer.
    expect(await analyzer.input.next()).toBe(ENQ);
    analyzer.socket.write(Buffer.from([ACK]));
    let text = '';
    for (;;) {
      const b = await analyzer.input.next();
      if (b === EOT) break;
      const frame = await analyzer.input.frame();
      expect(frame.checksumOk).toBe(true);
      text += frame.text;
      analyzer.socket.write(Buffer.from([ACK]));
    }
    expect(text).toBe(answerRecords);
  });
});

describe('ASTM channel: push to an analyzer or LIS', () => {
  async function receiver(behaviour: ConstructorParameters<typeof SimulatedReceiver>[0] = {}) {
    const r = new SimulatedReceiver(behaviour);
    const port = await r.listen();
    cleanup.push(() => r.close());
    return { r, destination: `127.0.0.1:${port}` };
  }
  const message = (body: string): ChannelMessage => ({ contentType: 'x-application/astm', body, remote: '' });

  it('sends a transmission in frames of at most 240 characters (ETB), retransmitting a frame the receiver refused', async () => {
    const { channel } = await startChannel();
    const { r, destination } = await receiver({
      answer: (index, attempt) => (index === 1 && attempt === 1 ? NAK : ACK),
    });
    const long = `C|1|I|${'y'.repeat(500)}|G`;
    const body = `H|\\^&\rP|1\r${long}\rL|1|N\r`;
    expect(await channel.push(destination, message(body), 5_000)).toBeUndefined();
    await until(() => r.transmissions.length === 1);
    const [sent] = r.transmissions;
    expect(sent.text).toBe(body);
    expect(sent.frames.every((f) => f.checksumOk)).toBe(true);
    expect(sent.frames.map((f) => f.number)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(sent.frames.map((f) => f.final)).toEqual([true, true, false, false, true, true]);
    expect(sent.frames.map((f) => f.text.length)).toEqual([6, 4, 240, 240, 29, 6]);
  });

  it('gives up after six refusals of one frame and ends with EOT', async () => {
    const { channel } = await startChannel();
    let tries = 0;
    const { r, destination } = await receiver({ answer: () => (tries++, NAK) });
    await expect(channel.push(destination, message('H|\\^&\rL|1\r'), 5_000)).rejects.toThrow(/refused 6 times/);
    await until(() => r.transmissions.length === 1);
    expect(tries).toBe(6);
    expect(r.transmissions[0].frames).toHaveLength(0);
  });

  it('tries again after a NAK to ENQ (receiver busy), and gives up when ENQ goes unanswered', async () => {
    const { channel } = await startChannel();
    const busy = await receiver({ onEnq: (n) => (n < 3 ? NAK : ACK) });
    await channel.push(busy.destination, message('H|\\^&\rL|1\r'), 5_000);
    await until(() => busy.r.transmissions.length === 1);
    expect(busy.r.transmissions[0].text).toBe('H|\\^&\rL|1\r');
    const silent = await receiver({ onEnq: () => undefined });
    await expect(channel.push(silent.destination, message('H|\\^&\rL|1\r'), 5_000)).rejects.toThrow(
      /did not answer ENQ within 300 ms/,
    );
  });

  it("yields to the remote on contention, receives the remote's transmission, then sends its own", async () => {
    // The remote's own ENQ follows 20 ms after the contention: our retry waits far longer, even on a busy machine.
    const { channel, delivered } = await startChannel({ settings: { contentionRetryMs: '3000' } });
    // A remote that answers our first ENQ with its own ENQ, then sends its results.
    const remote = net.createServer();
    const sent: string[] = [];
    remote.on('connection', (socket) => {
      let state = 'first-enq';
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        for (const b of chunk) {
          if (state === 'first-enq' && b === ENQ) {
            socket.write(Buffer.from([ENQ])); // contention
            state = 'waiting';
            setTimeout(() => {
              socket.write(Buffer.from([ENQ]));
              state = 'own-enq';
            }, 20);
          } else if (state === 'own-enq' && b === ACK) {
            socket.write(frameBytes(1, 'H|\\^&\r', true));
            state = 'frame1';
          } else if (state === 'frame1' && b === ACK) {
            socket.write(frameBytes(2, 'R|1|^^^K|4.1\r', true));
            state = 'frame2';
          } else if (state === 'frame2' && b === ACK) {
            socket.write(Buffer.from([EOT]));
            state = 'receive';
          } else if (state === 'receive' && b === ENQ) {
            socket.write(Buffer.from([ACK]));
          } else if (state === 'receive' && b === EOT) {
            sent.push(received);
          } else if (state === 'receive') {
            received += String.fromCharCode(b);
            if (b === 0x0a) socket.write(Buffer.from([ACK]));
          }
        }
      });
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => remote.close(() => resolve())));
    const port = (remote.address() as net.AddressInfo).port;
    const result = await channel.push(`127.0.0.1:${port}`, message('H|\\^&\rO|1|S-1\rL|1\r'), 5_000);
    expect(result).toBeUndefined();
    await until(() => sent.length === 1);
    expect(sent[0]).toContain('O|1|S-1');
    // What the remote sent while we waited is not lost: a push link hands it to the bot like any inbound transmission.
    await until(() => delivered.length === 1);
    expect(delivered[0].body).toBe('H|\\^&\rR|1|^^^K|4.1\r');
  });

  it("with pushReply=wait, returns the remote's reply transmission as the answer", async () => {
    const { channel } = await startChannel({ settings: { pushReply: 'wait' } });
    const { destination } = await receiver({ reply: ['H|\\^&', 'R|1|^^^GLU|5.0', 'L|1'] });
    const answer = await channel.push(destination, message('H|\\^&\rQ|1|^S1||ALL\rL|1\r'), 5_000);
    expect(answer).toEqual({
      contentType: 'x-application/astm',
      body: 'H|\\^&\rR|1|^^^GLU|5.0\rL|1\r',
      remote: destination,
    });
  });

  it('refuses a destination that is not host:port, and bad settings', async () => {
    const { channel } = await startChannel();
    await expect(channel.push('nowhere', message('H|\\^&\r'), 1_000)).rejects.toThrow(/not host:port/);
    expect(() =>
      createAstmChannel({
        name: 'x',
        address: new URL('astm://127.0.0.1:0'),
        settings: { frameTimeoutMs: 'soon' },
        deliver: async () => undefined,
        log: { info() {}, warn() {}, error() {} },
      }),
    ).toThrow(/frameTimeoutMs/);
  });
});
