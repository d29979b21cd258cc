import { describe, expect, it } from 'vitest';
import {
  astmValue,
  escapeAstm,
  formatAstmRecord,
  formatAstmTransmission,
  parseAstmTransmission,
  unescapeAstm,
  defaultAstmDelimiters,
} from './index.js';

// A typical analyzer upload (LIS2-A2 appendix style): two results under one order, comments.
const upload = [
  'H|\\^&|||ACMEHEMA^2.1^SN1234|||||LIS||P|1|20261128093000',
  'P|1|PID-77|||Doe^Jane^Q||19800101|F',
  'C|1|L|Patient fasting|G',
  'O|1|SPEC-9||^^^GLU\\^^^NA|R||||||N||||Serum',
  'R|1|^^^GLU|5.4|mmol/L|3.9 to 6.1|N||F||tech|20261128092000|20261128092500|ACME1',
  'C|1|I|Repeat &E& confirm: 5&S&4 &F& ok|G',
  'R|2|^^^NA|140|mmol/L|135 to 145|N||F',
  'L|1|N',
].join('\r');

describe('parseAstmTransmission', () => {
  it('reads records, fields, repeats and components numbered as in E1394', () => {
    const { records, messages } = parseAstmTransmission(upload + '\r');
    expect(records.map((r) => r.type)).toEqual(['H', 'P', 'C', 'O', 'R', 'C', 'R', 'L']);
    const [message] = messages;
    expect(message.delimiters).toEqual(defaultAstmDelimiters);
    expect(astmValue(message.header, 2)).toBe('\\^&');
    expect(astmValue(message.header, 5, 1)).toBe('ACMEHEMA');
    expect(astmValue(message.header, 5, 2)).toBe('2.1');
    const patient = message.patients[0];
    expect(astmValue(patient.record, 3)).toBe('PID-77');
    expect(astmValue(patient.record, 6, 2)).toBe('Jane');
    expect(patient.comments.map((c) => astmValue(c, 4))).toEqual(['Patient fasting']);
    const order = patient.orders[0];
    expect(astmValue(order.record, 3)).toBe('SPEC-9');
    // O.5 universal test id, two repeats
    expect(astmValue(order.record, 5, 4, 1)).toBe('GLU');
    expect(astmValue(order.record, 5, 4, 2)).toBe('NA');
    expect(
      order.results.map((r) => [astmValue(r.record, 3, 4), astmValue(r.record, 4), astmValue(r.record, 5)]),
    ).toEqual([
      ['GLU', '5.4', 'mmol/L'],
      ['NA', '140', 'mmol/L'],
    ]);
    expect(astmValue(order.results[0].comments[0], 4)).toBe('Repeat & confirm: 5^4 | ok');
    expect(message.terminator?.type).toBe('L');
    expect(astmValue(message.terminator!, 3)).toBe('N');
  });

  it('takes the delimiters from the header, and accepts LF or CRLF between records', () => {
    const text = 'H!@#$!!!X\nP!1!!ID#X$S$Y\r\nO!1!S1!!#####T1@#####T2\nR!1!#####T1!7$F$!u\nL!1';
    const { messages } = parseAstmTransmission(text);
    const [m] = messages;
    expect(m.delimiters).toEqual({ field: '!', repeat: '@', component: '#', escape: '$' });
    expect(astmValue(m.patients[0].record, 4, 1)).toBe('ID');
    expect(astmValue(m.patients[0].record, 4, 2)).toBe('X#Y');
    const order = m.patients[0].orders[0];
    expect(astmValue(order.record, 5, 6, 2)).toBe('T2');
    expect(astmValue(order.results[0].record, 4)).toBe('7!');
  });

  it('keeps a host query and several messages apart', () => {
    const text = 'H|\\^&\rQ|1|^SPEC-1||ALL||||||||O\rL|1|N\rH|\\^&\rP|1\rO|1|S2\rL|1';
    const { messages } = parseAstmTransmission(text);
    expect(messages).toHaveLength(2);
    expect(messages[0].queries.map((q) => astmValue(q, 3, 2))).toEqual(['SPEC-1']);
    expect(messages[1].patients[0].orders).toHaveLength(1);
  });

  it('puts an order that has no patient record under an empty patient, and ignores records before a header', () => {
    const { messages, records } = parseAstmTransmission('R|1|x\rH|\\^&\rO|1|S\rR|1|^^^K|4\rL|1');
    expect(records).toHaveLength(5);
    expect(messages[0].patients[0].orders[0].results).toHaveLength(1);
  });
});

describe('escapes', () => {
  it('round-trips every delimiter and decodes hexadecimal escapes', () => {
    const d = defaultAstmDelimiters;
    const value = 'a|b\\c^d&e';
    expect(unescapeAstm(escapeAstm(value, d), d)).toBe(value);
    expect(unescapeAstm('x&X41&y', d)).toBe('xAy');
    expect(unescapeAstm('not & an escape', d)).toBe('not & an escape');
  });

  it('formats records a parser reads back', () => {
    const text = formatAstmTransmission([
      formatAstmRecord(['H', undefined, '', '', ['HEARTH', '1']]),
      formatAstmRecord([
        'O',
        '1',
        'S|1',
        '',
        [
          ['', '', '', 'GLU'],
          ['', '', '', 'NA'],
        ],
      ]),
      formatAstmRecord(['L', '1', 'N']),
    ]);
    expect(text).toBe('H|\\^&|||HEARTH^1\rO|1|S&F&1||^^^GLU\\^^^NA\rL|1|N\r');
    const order = parseAstmTransmission(text).messages[0].patients[0].orders[0];
    expect(astmValue(order.record, 3)).toBe('S|1');
    expect(astmValue(order.record, 5, 4, 2)).toBe('NA');
  });
});

describe('astmRuntime', () => {
  it('is self-contained: its source alone, evaluated elsewhere (the bot sandbox), works', async () => {
    const { astmRuntime } = await import('./index.js');
    const standalone = new Function(`return (${astmRuntime.toString()})()`)() as ReturnType<typeof astmRuntime>;
    const { messages } = standalone.parseAstmTransmission(
      'H|\\^&\rP|1|PID-9\rO|1|S-1||^^^GLU\rR|1|^^^GLU|5&F&4|mmol/L\rL|1\r',
    );
    const result = messages[0].patients[0].orders[0].results[0].record;
    expect(standalone.astmValue(result, 3, 4)).toBe('GLU');
    expect(standalone.astmValue(result, 4)).toBe('5|4');
    expect(standalone.formatAstmRecord(['R', '1', '5|4'])).toBe('R|1|5&F&4');
  });
});
