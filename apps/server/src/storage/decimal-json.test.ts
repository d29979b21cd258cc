import { describe, expect, it, vi } from 'vitest';
import {
  copyKeepingDecimals,
  decimalText,
  hasDecimalTexts,
  parseKeepingDecimals,
  stringifyKeepingDecimals,
} from './decimal-json.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const OBSERVATION =
  '{"resourceType":"Observation","id":"o1","valueQuantity":{"value":1.0,"unit":"mg"},' +
  '"component":[{"valueQuantity":{"value":70.5}},{"valueQuantity":{"value":0.050}}],' +
  '"referenceRange":[{"low":{"value":3}}],"extension":[{"url":"x","valueDecimal":12345678901234567890}]}';

describe('which numbers keep their text', () => {
  const keeps = (text: string) => hasDecimalTexts(parseKeepingDecimals(text));

  it('those JSON.stringify would write otherwise, and only those', () => {
    for (const loose of [
      '1.0',
      '1.50',
      '1e3',
      '1E+2',
      '-0',
      '0.10',
      '12345678901234567890',
      '1.00000000000000001',
      '0.0000001',
    ]) {
      expect(keeps(`{"a":[${loose}]}`), loose).toBe(true);
    }
    for (const exact of ['1', '-12', '70.5', '0.05', '1e+21', '123456789012345', '[1,2,3]', '0.000001']) {
      expect(keeps(`{"a":${exact}}`), exact).toBe(false);
    }
  });

  it('not numbers inside strings or keys, escaped quotes and backslashes included', () => {
    expect(keeps('{"version":"1.0","a":"x\\"1.0\\"","b":"\\\\","c":2}')).toBe(false);
    expect(keeps('{"a":"\\\\","b":1.0}')).toBe(true);
    expect(keeps('{"1.0":1,"t":"10:30:00.500Z"}')).toBe(false);
  });

  it('under keys with escapes, after nested values, in arrays of arrays', () => {
    const r = parseKeepingDecimals('{"a\\"b":{"x":[1,{"y":2}],"z":3.10},"w":[[0,2.0]],"v":[{"u":{}}, 5.0]}') as Json;
    expect(decimalText(r['a"b'], 'z')).toBe('3.10');
    expect(decimalText(r.w[0], 1)).toBe('2.0');
    expect(decimalText(r.v, 1)).toBe('5.0');
  });
});

describe('parseKeepingDecimals', () => {
  it('keeps the text of each loose number beside its holder, in objects and arrays', () => {
    const r = parseKeepingDecimals(OBSERVATION) as Json;
    expect(decimalText(r.valueQuantity, 'value')).toBe('1.0');
    expect(decimalText(r.component[1].valueQuantity, 'value')).toBe('0.050');
    expect(decimalText(r.extension[0], 'valueDecimal')).toBe('12345678901234567890');
    expect(decimalText(r.component[0].valueQuantity, 'value')).toBeUndefined();
    const list = parseKeepingDecimals('{"a":[1.10,2,3.0]}') as Json;
    expect([0, 1, 2].map((i) => decimalText(list.a, i))).toEqual(['1.10', undefined, '3.0']);
  });

  it('marks the containers above a kept number, and nothing else', () => {
    const r = parseKeepingDecimals(OBSERVATION) as Json;
    expect([r, r.valueQuantity, r.component, r.component[1], r.extension].every(hasDecimalTexts)).toBe(true);
    expect([r.component[0], r.referenceRange, r.referenceRange[0].low].some(hasDecimalTexts)).toBe(false);
  });

  it('hands text without loose numbers to the given parser alone', () => {
    const parse = vi.fn(JSON.parse);
    const text = '{"resourceType":"Patient","a":[1.5,2]}';
    const value = parseKeepingDecimals(text, parse);
    expect(parse).toHaveBeenCalledTimes(1);
    expect(value).toEqual({ resourceType: 'Patient', a: [1.5, 2] });
    expect(hasDecimalTexts(value)).toBe(false);
  });

  it('lets the given parser refuse the text first', () => {
    const refuse = () => {
      throw new SyntaxError('refused');
    };
    expect(() => parseKeepingDecimals('{"a":1.0}', refuse)).toThrow('refused');
  });

  it('gives the values JSON.parse gives, __proto__ as data', () => {
    const text = '{"__proto__":{"x":1.0},"s":"\\u00e9\\n","n":null,"t":true,"e":[],"o":{},"d":-2.50e-3}';
    const value = parseKeepingDecimals(text) as Json;
    expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(text)));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it('ignores a kept text once its holder holds another number', () => {
    const r = parseKeepingDecimals(OBSERVATION) as Json;
    r.valueQuantity.value = 2;
    expect(decimalText(r.valueQuantity, 'value')).toBeUndefined();
    expect(stringifyKeepingDecimals(r)).toContain('"valueQuantity":{"value":2,"unit":"mg"}');
  });
});

describe('stringifyKeepingDecimals', () => {
  it('writes back the text as it was parsed', () => {
    expect(stringifyKeepingDecimals(parseKeepingDecimals(OBSERVATION))).toBe(OBSERVATION);
    const odd = '[1.0,{"a":[[2.50]],"b":null},"1.0",-0,1E3]';
    expect(stringifyKeepingDecimals(parseKeepingDecimals(odd))).toBe(odd);
  });

  it('keeps the texts through a spread of the resource, with what the spread changed', () => {
    const r = parseKeepingDecimals('{"resourceType":"ChargeItem","factorOverride":0.80,"id":"a"}') as Json;
    const copy = { resourceType: r.resourceType, id: 'b', meta: { versionId: '1' }, ...r };
    copy.id = 'b';
    expect(stringifyKeepingDecimals(copy)).toBe(
      '{"resourceType":"ChargeItem","id":"b","meta":{"versionId":"1"},"factorOverride":0.80}',
    );
  });

  it('keeps nested texts when the top object was rebuilt around parsed elements', () => {
    const r = parseKeepingDecimals('{"resourceType":"Observation","valueQuantity":{"value":1.0}}') as Json;
    const rebuilt: Json = {};
    for (const [k, v] of Object.entries(r)) rebuilt[k] = v;
    expect(hasDecimalTexts(rebuilt)).toBe(false);
    expect(stringifyKeepingDecimals(rebuilt)).toBe('{"resourceType":"Observation","valueQuantity":{"value":1.0}}');
  });

  it('is JSON.stringify for values without kept texts, undefined members and toJSON included', () => {
    const plain = { a: 1.5, b: undefined, c: [undefined, 2], d: new Date(0) };
    expect(stringifyKeepingDecimals(plain)).toBe(JSON.stringify(plain));
    const kept = parseKeepingDecimals('{"a":1.0,"b":[1.0,3]}') as Json;
    kept.c = undefined;
    kept.b.push(undefined);
    expect(stringifyKeepingDecimals(kept)).toBe('{"a":1.0,"b":[1.0,3,null]}');
  });
});

describe('copyKeepingDecimals', () => {
  it('copies deeply, keeping the texts', () => {
    const r = parseKeepingDecimals(OBSERVATION) as Json;
    const copy = copyKeepingDecimals(r);
    copy.valueQuantity.unit = 'g';
    expect(r.valueQuantity.unit).toBe('mg');
    expect(stringifyKeepingDecimals(copy)).toBe(OBSERVATION.replace('"mg"', '"g"'));
    const plain = { a: [1, { b: 2 }] };
    expect(copyKeepingDecimals(plain)).toEqual(plain);
    expect(copyKeepingDecimals(plain).a).not.toBe(plain.a);
  });
});

describe('round trip', () => {
  /** A deterministic generator of compact JSON text with numbers written every way (seeded, so a failure repeats). */
  function randomJson(seed: number): string {
    let state = seed;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    const numbers = [
      '1.0',
      '2.50',
      '0.10',
      '-0',
      '1e3',
      '-2.5E-3',
      '7',
      '70.5',
      '12345678901234567890',
      '0.0000001',
      '3',
    ];
    const strings = ['"a"', '"1.0"', '"x\\"1.0\\""', '"\\\\"', '"10:30:00.500Z"', '""'];
    const keys = ['"k"', '"v"', '"a\\"b"', '"1"', '"value"', '"__proto__"'];
    const value = (depth: number): string => {
      const pick = next(depth > 4 ? 3 : 6);
      if (pick === 0) return numbers[next(numbers.length)];
      if (pick === 1) return strings[next(strings.length)];
      if (pick === 2) return ['true', 'false', 'null'][next(3)];
      if (pick === 3) return `[${Array.from({ length: next(4) }, () => value(depth + 1)).join(',')}]`;
      const used = new Set<string>();
      const members = Array.from({ length: next(4) }, () => keys[next(keys.length)]).filter(
        (k) => !used.has(k) && used.add(k) && k !== '"1"',
      );
      return `{${members.map((k) => `${k}:${value(depth + 1)}`).join(',')}}`;
    };
    return `{"resourceType":"Basic","x":${value(0)}}`;
  }

  it('writes back what it parsed, for texts with numbers anywhere', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const text = randomJson(seed);
      expect(stringifyKeepingDecimals(parseKeepingDecimals(text)), text).toBe(text);
    }
  });
});
