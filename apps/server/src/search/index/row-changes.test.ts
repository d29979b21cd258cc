import { describe, expect, it } from 'vitest';
import { rowChanges } from './row-changes.js';
import { emptyRowSet, type IndexRow, type RowSet } from './rows.js';

const str = (code: string, value: string, grp = 0): IndexRow => ({
  code,
  grp,
  values: [value.toLowerCase(), value],
  sortLow: value,
  sortHigh: value,
});

function rows(strings: IndexRow[], tokens: IndexRow[] = []): RowSet {
  return { ...emptyRowSet(), string: strings, token: tokens };
}

describe('rowChanges', () => {
  it('keeps the rows that did not change and lists the ones that did', () => {
    const before = rows([str('family', 'Smith'), str('address', '1 Elm St')]);
    const after = rows([str('family', 'Smith'), str('address', '2 Oak Rd')]);
    const changes = rowChanges(before, after);
    expect(changes.string.remove.map((r) => r.values[1])).toEqual(['1 Elm St']);
    expect(changes.string.add.map((r) => r.values[1])).toEqual(['2 Oak Rd']);
    expect(changes.token).toEqual({ remove: [], add: [] });
  });

  it('an unchanged resource changes nothing, whatever the order of its rows', () => {
    const a = [str('given', 'Ann'), str('given', 'Bea')];
    expect(rowChanges(rows(a), rows([...a].reverse())).string).toEqual({ remove: [], add: [] });
  });

  it('a row whose number of copies changed is removed once and inserted as often as it now appears', () => {
    const twice = rows([str('given', 'Ann'), str('given', 'Ann')]);
    const once = rows([str('given', 'Ann')]);
    const down = rowChanges(twice, once).string;
    expect(down.remove).toHaveLength(1);
    expect(down.add).toHaveLength(1);
    const up = rowChanges(once, twice).string;
    expect(up.remove).toHaveLength(1);
    expect(up.add).toHaveLength(2);
  });

  it('tells rows apart by every stored column: group, sort marks and each value', () => {
    const base = str('name', 'Ann');
    const variants: IndexRow[] = [
      { ...base, grp: 1 },
      { ...base, isMin: false },
      { ...base, isMax: false },
      { ...base, values: ['ann', 'ANN'] },
      { ...base, code: 'given' },
    ];
    for (const v of variants) {
      const changes = rowChanges(rows([base]), rows([v])).string;
      expect(changes.remove).toEqual([base]);
      expect(changes.add).toEqual([v]);
    }
  });
});
