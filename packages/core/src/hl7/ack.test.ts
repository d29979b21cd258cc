import { describe, expect, it } from 'vitest';
import { buildAck, hl7Timestamp } from './index.js';
import { Hl7Message } from './index.js';

describe('buildAck', () => {
  const message = Hl7Message.parse(
    'MSH|^~\\&|LAB|NORTH|HEARTH|CLOUD|20240101120000||ORU^R01^ORU_R01|CTRL42|P|2.5.1\rPID|1||123',
  );

  it('swaps sender and receiver and names the original control id', () => {
    const ack = buildAck(message, { code: 'AA', controlId: 'ACK1', now: new Date('2024-05-06T07:08:09Z') });
    expect(ack.toString()).toBe(
      'MSH|^~\\&|HEARTH|CLOUD|LAB|NORTH|20240506070809+0000||ACK^R01^ACK|ACK1|P|2.5.1\rMSA|AA|CTRL42\r',
    );
  });

  it('carries an error text, escaped', () => {
    const ack = buildAck(message, { code: 'AE', text: 'bad | field' });
    expect(ack.get('MSA-1')).toBe('AE');
    expect(ack.get('MSA-3')).toBe('bad | field');
    expect(ack.getSegment('MSA')!.getRaw(3)).toBe('bad \\F\\ field');
    expect(ack.controlId).toMatch(/^[0-9a-f]{20}$/);
  });

  it('keeps the original delimiters', () => {
    const odd = Hl7Message.parse('MSH#$*!@#A#B#C#D#20240101##ADT$A08#9#T#2.3');
    const ack = buildAck(odd, { code: 'AR', controlId: 'Z' });
    expect(ack.toString().startsWith('MSH#$*!@#C#D#A#B#')).toBe(true);
    expect(ack.get('MSH-9.2')).toBe('A08');
    expect(ack.get('MSA-2')).toBe('9');
  });

  it('formats timestamps as HL7 DTM in UTC', () => {
    expect(hl7Timestamp(new Date('2024-12-31T23:59:58Z'))).toBe('20241231235958+0000');
  });
});
