import { describe, expect, it } from 'vitest';
import { decimalText, stringifyKeepingDecimals } from '../storage/decimal-json.js';
import { parseFormBody, parseJsonBody } from './body.js';
import { UnstorableInputError } from './storable-input.js';

/** The `expression` of the refusal `parse` throws. */
function refusedAt(parse: () => unknown): string[] | undefined {
  try {
    parse();
  } catch (err) {
    expect(err).toBeInstanceOf(UnstorableInputError);
    return (err as UnstorableInputError).outcome.issue[0].expression;
  }
  throw new Error('not refused');
}

describe('parseJsonBody refuses text the database cannot store, naming the element', () => {
  const json = (text: string) => () => parseJsonBody(text, 64);

  it('an escaped NUL or unpaired surrogate, at its FHIRPath-like path', () => {
    expect(refusedAt(json('{"resourceType":"Patient","name":[{"family":"a\\u0000b"}]}'))).toEqual([
      'Patient.name[0].family',
    ]);
    expect(refusedAt(json('{"resourceType":"Patient","name":[{"given":["x","\\uD800"]}]}'))).toEqual([
      'Patient.name[0].given[1]',
    ]);
    expect(refusedAt(json('{"resourceType":"Patient","name":[{"family":"\\udc00\\ud800"}]}'))).toEqual([
      'Patient.name[0].family',
    ]);
    expect(
      refusedAt(json('{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","gender":"\\u0000"}}]}')),
    ).toEqual(['Bundle.entry[0].resource.gender']);
  });

  it('a NUL in a property name, at the object holding it', () => {
    expect(refusedAt(json('{"resourceType":"Patient","name":[{"fam\\u0000":"x"}]}'))).toEqual(['Patient.name[0]']);
  });

  it('other JSON: paths from its first key or index', () => {
    expect(refusedAt(json('{"email":"a\\u0000@x"}'))).toEqual(['email']);
    expect(refusedAt(json('[{"op":"add","path":"/name","value":"\\u0000"}]'))).toEqual(['[0].value']);
    expect(refusedAt(json('"\\u0000"'))).toBeUndefined();
  });

  it('a raw NUL inside a string is named like an escaped one', () => {
    expect(refusedAt(json('{"resourceType":"Patient","id":"a\u0000b"}'))).toEqual(['Patient.id']);
  });

  it('a raw NUL outside a string is malformed JSON', () => {
    expect(json('{"resourceType":"Patient"}\u0000')).toThrow(/Malformed JSON/);
  });

  it('accepts surrogate pairs, escaped or not, and an escaped backslash before "u0000"', () => {
    expect(parseJsonBody('{"a":"\\ud83d\\ude00","b":"\ud83d\ude00","c":"\\\\u0000","d":"\\\\ud800"}', 64)).toEqual({
      a: '\ud83d\ude00',
      b: '\ud83d\ude00',
      c: '\\u0000',
      d: '\\ud800',
    });
  });
});

describe('parseFormBody refuses a NUL, naming the field', () => {
  it('in a value or a name', () => {
    expect(refusedAt(() => parseFormBody('grant_type=x&code=%00'))).toEqual(['code']);
    expect(refusedAt(() => parseFormBody('a%00b=1'))).toEqual(['a\ufffdb']);
  });
});

describe('parseJsonBody keeps decimals as written', () => {
  it('a decimal written with trailing zeros keeps its text through to the stored form', () => {
    const text =
      '{"resourceType":"Observation","valueQuantity":{"value":1.0},"component":[{"valueQuantity":{"value":2.50}}]}';
    const body = parseJsonBody(text, 64) as { valueQuantity: object };
    expect(decimalText(body.valueQuantity, 'value')).toBe('1.0');
    expect(stringifyKeepingDecimals(body)).toBe(text);
  });

  it('still refuses a __proto__ key in a body with such decimals', () => {
    expect(() => parseJsonBody('{"a":1.0,"__proto__":{"x":1}}', 64)).toThrow(/Malformed JSON/);
  });
});
