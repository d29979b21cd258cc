import { getSchema } from '@hearth/definitions';
import { describe, expect, it } from 'vitest';
import { checkPrimitive, FHIR_PRIMITIVE_TYPES, validationRegexes } from './primitives.js';

/** [type, valid values, invalid values] */
const cases: [string, unknown[], unknown[]][] = [
  ['boolean', [true, false], ['true', 0, 1, null]],
  ['integer', [0, -5, 2147483647, -2147483648], [1.5, '1', 2147483648, NaN, Infinity]],
  ['positiveInt', [1, 42], [0, -1, 1.2, '3']],
  ['unsignedInt', [0, 7], [-1, 0.5]],
  ['decimal', [0, -1.25, 1e-7, 100], ['1.0', NaN, Infinity]],
  ['string', ['a', ' padded ', 'line\nbreak\ttab', 'ü'], ['', '   ', '\n', 'bell\u0007', 3, {}]],
  ['markdown', ['**bold**'], ['', ' \t ']],
  ['code', ['final', 'a b', 'x\u00a0y', 'Â\u00a0'], ['', ' lead', 'trail ', 'two  spaces', 'tab\tx y ']],
  ['id', ['a', 'A-1.b', 'x'.repeat(64)], ['', 'x'.repeat(65), 'has space', 'under_score', 'slash/']],
  ['uri', ['http://example.org/a?b=c', 'urn:x', 'Patient/1'], ['', 'has space', 'tab\there']],
  ['url', ['https://example.org'], ['https://example.org/a b']],
  ['canonical', ['http://hl7.org/fhir/StructureDefinition/Patient|4.0.1'], ['a b']],
  ['oid', ['urn:oid:1.2.840.113619'], ['urn:oid:3.1', '1.2.3', 'urn:oid:1.02']],
  [
    'uuid',
    ['urn:uuid:c757873d-ec9a-4326-a141-556f43239520'],
    ['c757873d-ec9a-4326-a141-556f43239520', 'urn:uuid:C757873D-EC9A-4326-A141-556F43239520'],
  ],
  ['date', ['2024', '2024-02', '2024-02-29'], ['2024-13', '2024-02-30T00:00:00Z', '24-01-01', '2024-1-01', '0000']],
  [
    'dateTime',
    [
      '2015',
      '2015-02',
      '2015-02-07',
      '2015-02-07T13:28:17-05:00',
      '2017-01-01T00:00:00.123Z',
      '2015-02-07T13:28:17+14:00',
    ],
    [
      '2015-02-07T13:28',
      '2015-02-07T13:28:17',
      '2015-02-07T25:00:00Z',
      '2015-02-07T13:28:17+15:00',
      '2015-02-07 13:28:17Z',
    ],
  ],
  ['instant', ['2015-02-07T13:28:17.239+02:00', '2015-02-07T13:28:17Z'], ['2015-02-07', '2015-02-07T13:28:17', '2015']],
  ['time', ['13:28:17', '00:00:00.5'], ['24:00:00', '13:28', '1:28:17']],
  ['base64Binary', ['aGVsbG8=', 'aGVs bG8=', 'aGVsbG8h\nd29ybGQ='], ['abc', 'aGVsbG8=x', 'aGV$bG8=', '=aGV']],
  [
    'xhtml',
    ['<div xmlns="http://www.w3.org/1999/xhtml">hi</div>', '  <div>x</div>\n', '<div/>'],
    ['hi', '<p>x</p>', ''],
  ],
];

describe('checkPrimitive', () => {
  for (const [type, valid, invalid] of cases) {
    it(`accepts valid and rejects invalid ${type} values`, () => {
      for (const value of valid) {
        expect(checkPrimitive(type, value), `${type} ${JSON.stringify(value)}`).toBeUndefined();
      }
      for (const value of invalid) {
        expect(checkPrimitive(type, value), `${type} ${JSON.stringify(value)}`).toEqual(expect.any(String));
      }
    });
  }

  it('explains the problem', () => {
    expect(checkPrimitive('date', '2024-13')).toBe('Invalid date "2024-13"');
    expect(checkPrimitive('boolean', 'yes')).toBe('Expected a boolean (true or false), got "yes"');
    expect(checkPrimitive('integer', 1.5)).toBe('Invalid integer 1.5: expected a 32-bit integer');
    expect(checkPrimitive('string', '')).toMatch(/empty/);
    expect(checkPrimitive('dateTime', 'x'.repeat(100))).toBe(`Invalid dateTime "${'x'.repeat(40)}..."`);
  });

  it('checks large base64 content quickly', () => {
    const big = Buffer.alloc(5_000_000, 7).toString('base64');
    const started = performance.now();
    expect(checkPrimitive('base64Binary', big)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('validationRegexes', () => {
  it('are the anchored R4 patterns', () => {
    expect(validationRegexes.id.test('abc')).toBe(true);
    expect(validationRegexes.id.test('abc def')).toBe(false);
    expect(validationRegexes.unsignedInt.test('10')).toBe(true);
    expect(validationRegexes.unsignedInt.test('01')).toBe(false);
    expect(validationRegexes.positiveInt.test('+5')).toBe(true);
    expect(validationRegexes.integer.test('-0')).toBe(true);
    expect(validationRegexes.decimal.test('1.50e3')).toBe(true);
    expect(validationRegexes.decimal.test('01.5')).toBe(false);
    expect(validationRegexes.boolean.test('true')).toBe(true);
    expect(validationRegexes.dateTime.test('2015-02-07T13:28:17Z')).toBe(true);
  });
});

describe('FHIR_PRIMITIVE_TYPES', () => {
  it("is exactly the R4 schema's primitive types", () => {
    const fromSchema = Object.values(getSchema().types)
      .filter((t) => t.kind === 'primitive-type')
      .map((t) => t.name);
    expect([...FHIR_PRIMITIVE_TYPES].sort()).toEqual(fromSchema.sort());
  });
});
