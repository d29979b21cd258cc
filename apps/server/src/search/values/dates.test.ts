import { describe, expect, it } from 'vitest';
import { parseDateRange } from './dates.js';

describe('parseDateRange', () => {
  it('ends a last day of a month or year in the next one (31 December was once [low, low of that January))', () => {
    expect(parseDateRange('2019-12-31')).toEqual({ low: Date.UTC(2019, 11, 31), high: Date.UTC(2020, 0, 1) });
    expect(parseDateRange('2019-12')).toEqual({ low: Date.UTC(2019, 11, 1), high: Date.UTC(2020, 0, 1) });
    expect(parseDateRange('2020-02-29')).toEqual({ low: Date.UTC(2020, 1, 29), high: Date.UTC(2020, 2, 1) });
    expect(parseDateRange('2019')).toEqual({ low: Date.UTC(2019, 0, 1), high: Date.UTC(2020, 0, 1) });
  });

  it('keeps years before 100 and rejects impossible days', () => {
    const low = parseDateRange('0050-12-31')?.low as number;
    expect(new Date(low).getUTCFullYear()).toBe(50);
    expect(new Date((parseDateRange('0050-12-31') as { high: number }).high).getUTCFullYear()).toBe(51);
    expect(parseDateRange('2019-02-29')).toBeUndefined();
    expect(parseDateRange('2019-12-31T23:59:59.999Z')).toEqual({
      low: Date.UTC(2019, 11, 31, 23, 59, 59, 999),
      high: Date.UTC(2020, 0, 1),
    });
  });
});
