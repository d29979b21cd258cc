import { describe, expect, it } from 'vitest';
import { dedupeKey } from './delivery.js';

const hl7 = (app: string, facility: string, id: string, pid = 'X') =>
  `MSH|^~\\&|${app}|${facility}|HEARTH|CLOUD|20240101||ADT^A01|${id}|P|2.5.1\rPID|1||${pid}\r`;
const message = (body: string, contentType = 'x-application/hl7-v2+er7') => ({ contentType, body, remote: 'x:1' });

describe('dedupeKey', () => {
  it('is the same for a retransmission of one HL7 message (same sender, same MSH-10), even if re-encoded', () => {
    expect(dedupeKey(message(hl7('LAB', 'NORTH', 'C1')))).toBe(dedupeKey(message(hl7('LAB', 'NORTH', 'C1', 'Y'))));
  });

  it('tells apart two senders that reuse a control id, by sending application and facility', () => {
    const key = dedupeKey(message(hl7('LAB', 'NORTH', 'C1')));
    expect(dedupeKey(message(hl7('RIS', 'NORTH', 'C1')))).not.toBe(key);
    expect(dedupeKey(message(hl7('LAB', 'SOUTH', 'C1')))).not.toBe(key);
    expect(dedupeKey(message(hl7('LAB', 'NORTH', 'C2')))).not.toBe(key);
  });

  it('falls back to a content hash for other content and for HL7 without a control id', () => {
    expect(dedupeKey(message('H|\\^&\rL|1\r', 'x-application/astm'))).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(dedupeKey(message('not hl7'))).toMatch(/^sha256:/);
    expect(dedupeKey(message('a', 'x-application/astm'))).not.toBe(dedupeKey(message('b', 'x-application/astm')));
  });
});
