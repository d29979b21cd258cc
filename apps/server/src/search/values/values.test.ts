import { describe, expect, it } from 'vitest';
import { parseDateRange } from './dates.js';
import { formatDecimal, parseDecimal, precisionRange, shiftDecimal } from './decimals.js';
import { soundex } from './phonetic.js';
import { normalizeString, prefixRange } from './strings.js';
import { normalizeUcum, toBaseUnits } from './ucum.js';

const iso = (ms: number) => new Date(ms).toISOString();

describe('dates as ranges', () => {
  it('covers the precision of partial dates and times', () => {
    const y = parseDateRange('2020')!;
    expect([iso(y.low), iso(y.high)]).toEqual(['2020-01-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z']);
    const m = parseDateRange('2020-02')!;
    expect(iso(m.high)).toBe('2020-03-01T00:00:00.000Z');
    const leap = parseDateRange('2020-02-29')!;
    expect(iso(leap.high)).toBe('2020-03-01T00:00:00.000Z');
    const s = parseDateRange('2020-01-01T10:00:00+05:00')!;
    expect([iso(s.low), iso(s.high)]).toEqual(['2020-01-01T05:00:00.000Z', '2020-01-01T05:00:01.000Z']);
    const ms = parseDateRange('2020-01-01T10:00:00.123Z')!;
    expect(ms.high - ms.low).toBe(1);
  });
  it('rejects impossible dates', () => {
    for (const bad of ['2021-02-29', '2020-13', '2020-00-10', '20200101', '2020-01-01T25:00:00Z', 'abc']) {
      expect(parseDateRange(bad), bad).toBeUndefined();
    }
  });
});

describe('decimals', () => {
  it('keeps the implicit precision range exactly', () => {
    const r = (t: string) => {
      const { low, high } = precisionRange(parseDecimal(t)!);
      return [formatDecimal(low), formatDecimal(high)];
    };
    expect(r('100')).toEqual(['99.5', '100.5']);
    expect(r('100.00')).toEqual(['99.995', '100.005']);
    expect(r('1e2')).toEqual(['50', '150']);
    expect(r('-0.5')).toEqual(['-0.55', '-0.45']);
  });
  it('scales by powers of ten without float error', () => {
    expect(formatDecimal(shiftDecimal(parseDecimal('5.4')!, -3))).toBe('0.0054');
    expect(formatDecimal(shiftDecimal(parseDecimal('0.1')!, 1))).toBe('1');
    expect(formatDecimal(shiftDecimal(parseDecimal('3.3')!, 3))).toBe('3300');
  });
});

describe('UCUM', () => {
  it('folds metric prefixes into a power of ten', () => {
    expect(normalizeUcum('mg')).toEqual({ unit: 'g', power: -3 });
    expect(normalizeUcum('kg')).toEqual({ unit: 'g', power: 3 });
    expect(normalizeUcum('mg/dL')).toEqual({ unit: 'g/L', power: -2 });
    expect(normalizeUcum('mmol/L')).toEqual({ unit: 'mol/L', power: -3 });
    expect(normalizeUcum('mm[Hg]')).toEqual({ unit: 'm[Hg]', power: -3 });
    expect(normalizeUcum('10*3/uL')).toEqual({ unit: '/L', power: 9 });
  });
  it('keeps units that are not metric', () => {
    expect(normalizeUcum('min')).toEqual({ unit: 'min', power: 0 });
    expect(normalizeUcum('/min')).toEqual({ unit: '/min', power: 0 });
    expect(normalizeUcum('Cel')).toEqual({ unit: 'Cel', power: 0 });
    expect(normalizeUcum('%')).toEqual({ unit: '%', power: 0 });
    expect(normalizeUcum('{beats}/min')).toEqual({ unit: '/min', power: 0 });
  });
});

describe('strings', () => {
  it('normalises case, accents and spaces', () => {
    expect(normalizeString('  Chloé   MÜLLER ')).toBe('chloe muller');
    expect(normalizeString('García Márquez')).toBe('garcia marquez');
  });
  it('turns a prefix into a byte range', () => {
    expect(prefixRange('smi')).toEqual({ low: 'smi', high: 'smj' });
    expect(prefixRange('z')).toEqual({ low: 'z', high: '{' });
  });
  it('Soundex', () => {
    expect(soundex('Smith')).toBe('S530');
    expect(soundex('Smyth')).toBe('S530');
    expect(soundex('Robert')).toBe('R163');
    expect(soundex('Rupert')).toBe('R163');
    expect(soundex('Tymczak')).toBe('T522');
    expect(soundex('Ashcraft')).toBe('A261');
  });
});

describe('values in UCUM base units', () => {
  const base = (value: string, code: string) => {
    const c = toBaseUnits(parseDecimal(value)!, code);
    return c && `${formatDecimal(c.value)} ${c.unit}`;
  };

  it('shifts metric prefixes exactly and converts other units with the UCUM library', () => {
    expect(base('5.4', 'mg')).toBe('0.0054 g');
    expect(base('0.1', 'ug')).toBe('0.0000001 g');
    expect(base('100', 'mg/dL')).toBe('1000 g.m-3');
    expect(base('2', '[lb_av]')).toBe('907.18474 g');
    expect(base('90', 'min')).toBe('5400 s');
    expect(base('1.5', 'h')).toBe('5400.0 s'); // the digits written are kept
    expect(base('37', 'Cel')).toBe('310.15 K');
    expect(base('1', '[in_i]')).toBe('0.0254 m');
    expect(base('50', '%')).toBe('0.50 1');
  });

  it('falls back to folding prefixes for units without base units, undefined for none', () => {
    expect(base('5', 'm[IU]')).toBe('0.005 [IU]');
    expect(base('5', '[IU]/L')).toBe('5 [IU]/L');
    expect(base('1', 'not a unit')).toBeUndefined();
  });
});
