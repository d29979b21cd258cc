import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENCODING, escapeHl7, unescapeHl7, type Hl7Encoding } from './index.js';
import { Hl7Message } from './index.js';

const ADT = [
  'MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240102030405||ADT^A01^ADT_A01|MSG00001|P|2.5.1',
  'EVN|A01|20240102030405',
  'PID|1||12345^^^HOSP^MR~67890^^^SSA^SS||DOE^JOHN^Q\\T\\R||19800101|M|||1 MAIN ST^^TOWN^ST^12345',
  'OBX|1|TX|NOTE||line one\\X0D\\line two \\F\\ pipe \\E\\ backslash \\H\\bold\\N\\',
  'OBX|2|NM|8867-4^Heart rate^LN||72|/min',
].join('\r');

describe('Hl7Message', () => {
  it('reads MSH with its numbering quirk: MSH-1 is the separator, MSH-2 the encoding characters', () => {
    const message = Hl7Message.parse(ADT);
    expect(message.header.get(1)).toBe('|');
    expect(message.header.get(2)).toBe('^~\\&');
    expect(message.get('MSH-3')).toBe('SENDAPP');
    expect(message.controlId).toBe('MSG00001');
    expect(message.messageType).toBe('ADT^A01');
    expect(message.version).toBe('2.5.1');
  });

  it('reads repetitions, components, subcomponents and escapes', () => {
    const message = Hl7Message.parse(ADT);
    expect(message.get('PID-3')).toBe('12345');
    expect(message.get('PID-3[1].4')).toBe('SSA');
    expect(message.get('PID-5.3')).toBe('Q&R');
    expect(message.getSegment('PID')!.getValues(3)).toEqual([
      [['12345'], [''], [''], ['HOSP'], ['MR']],
      [['67890'], [''], [''], ['SSA'], ['SS']],
    ]);
    expect(message.get('OBX-5')).toBe('line one\rline two | pipe \\ backslash \\H\\bold\\N\\');
    expect(message.get('OBX(1)-3.2')).toBe('Heart rate');
    expect(message.get('ZZZ-1')).toBe('');
  });

  it('serialises back to exactly what it read, each segment ending with CR', () => {
    expect(Hl7Message.parse(ADT).toString()).toBe(`${ADT}\r`);
    expect(Hl7Message.parse(ADT.replaceAll('\r', '\r\n')).toString()).toBe(`${ADT}\r`);
  });

  it('takes its delimiters from MSH-2', () => {
    const text = 'MSH#$*!@#A#B#C#D#20240101##ORU$R01#X1#P#2.3\rPID#1##123$$$H*ignored!F!456$$$K';
    const message = Hl7Message.parse(text);
    expect(message.encoding).toMatchObject({
      field: '#',
      component: '$',
      repetition: '*',
      escape: '!',
      subcomponent: '@',
    });
    expect(message.messageType).toBe('ORU^R01');
    expect(message.get('PID-3.4')).toBe('H');
    expect(message.get('PID-3[1].1')).toBe('ignored#456');
    expect(message.toString()).toBe(`${text}\r`);
  });

  it('decodes hexadecimal escapes as UTF-8', () => {
    const message = Hl7Message.parse('MSH|^~\\&|A\rNTE|1||caf\\XC3A9\\ \\X41\\');
    expect(message.get('NTE-3')).toBe('café A');
  });

  it('refuses text that is not an HL7 message', () => {
    expect(() => Hl7Message.parse('')).toThrow(/empty/);
    expect(() => Hl7Message.parse('PID|1')).toThrow(/must start with an MSH/);
    expect(() => Hl7Message.parse('MSH|^^\\&|A')).toThrow(/repeat/);
    expect(() => Hl7Message.parse('MSH|^~\\&|A\rpid|1')).toThrow(/segment 2/);
  });

  it('builds a message with setters that escape', () => {
    const message = Hl7Message.create();
    message.header.set(3, 'APP|1').setComponents(9, ['ADT', 'A04']).set(10, 'X');
    message.addSegment('PID').setValues(5, [[['DOE'], ['JO^HN']], [['ROE']]]);
    expect(message.toString()).toBe('MSH|^~\\&|APP\\F\\1||||||ADT^A04|X\rPID|||||DOE^JO\\S\\HN~ROE\r');
    expect(() => message.header.set(2, 'x')).toThrow(/delimiters/);
  });
});

const encodingArb: fc.Arbitrary<Hl7Encoding> = fc
  .shuffledSubarray(['|', '^', '~', '\\', '&', '#', '$', '*', '!', '@'], { minLength: 5, maxLength: 5 })
  .map(([field, component, repetition, escape, subcomponent]) => ({
    field,
    component,
    repetition,
    escape,
    subcomponent,
    truncation: '',
  }));

/** Values drawn so they often contain delimiters, escapes and line breaks. */
const valueArb = fc.oneof(
  fc.string(),
  fc.stringMatching(/^[|^~\\&#$*!@\r\nXA-F0-9a ]{0,12}$/),
  fc.string({ unit: 'grapheme' }),
);

const fieldArb = fc.array(
  fc.array(fc.array(valueArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
  {
    minLength: 1,
    maxLength: 3,
  },
);

describe('Hl7Message round trips (properties)', () => {
  it('unescape(escape(v)) = v for any value and delimiters', () => {
    fc.assert(
      fc.property(encodingArb, valueArb, (encoding, value) => {
        expect(unescapeHl7(escapeHl7(value, encoding), encoding)).toBe(value);
      }),
    );
  });

  it('an escaped value holds no delimiter and no line break', () => {
    fc.assert(
      fc.property(valueArb, (value) => {
        expect(escapeHl7(value, DEFAULT_ENCODING)).not.toMatch(/[|^~&\r\n]/);
      }),
    );
  });

  it('values set into a message read back the same after serialising and parsing', () => {
    fc.assert(
      fc.property(
        encodingArb,
        fc.array(fc.tuple(fc.integer({ min: 1, max: 8 }), fieldArb), { maxLength: 6 }),
        (encoding, fields) => {
          const message = Hl7Message.create(encoding);
          message.header.set(10, 'ID');
          const segment = message.addSegment('ZZ1');
          for (const [n, values] of fields) {
            segment.setValues(n, values);
          }
          const text = message.toString();
          const parsed = Hl7Message.parse(text);
          expect(parsed.toString()).toBe(text);
          const read = parsed.getSegment('ZZ1')!;
          const last = new Map(fields);
          for (const [n, values] of last) {
            expect(read.getValues(n)).toEqual(values);
            expect(read.get(n, 1, 1, 0)).toBe(values[0][0][0]);
          }
        },
      ),
    );
  });
});

describe('hl7Runtime', () => {
  it('is self-contained: its source alone, evaluated elsewhere (the bot sandbox), works', async () => {
    const { hl7Runtime } = await import('./index.js');
    const standalone = new Function(`return (${hl7Runtime.toString()})()`)() as ReturnType<typeof hl7Runtime>;
    const message = standalone.Hl7Message.parse(ADT);
    expect(message.get('PID-5.3')).toBe('Q&R');
    expect(standalone.buildAck(message, { code: 'AA', controlId: 'A' }).get('MSA-2')).toBe('MSG00001');
  });
});
